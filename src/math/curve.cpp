#include <stdexcept>

#include "math/bn254.hpp"
#include "math/g1.hpp"
#include "math/g2.hpp"

namespace stagehand::math {
namespace {

template <class Field>
Field from_hex(std::string_view hex) {
  const auto value = Field::from_canonical_limbs(detail::limbs_from_hex<Field::limb_count>(hex));
  if (!value) throw std::logic_error("generator coordinate is not below q");
  return *value;
}

}  // namespace

AffinePoint<G1Curve> G1Curve::generator() {
  static const G1Affine point = G1Affine::from_coordinates(
      from_hex<Fq>("17f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bb"),
      from_hex<Fq>("08b3f481e3aaa0f1a09e30ed741d8ae4fcf5e095d5d00af600db18cb2c04b3edd03cc744a2888ae40caa232946c5e7e1"));
  return point;
}

AffinePoint<G2Curve> G2Curve::generator() {
  static const G2Affine point = G2Affine::from_coordinates(
      Fq2{from_hex<Fq>(
              "024aa2b2f08f0a91260805272dc51051c6e47ad4fa403b02b4510b647ae3d1770bac0326a805bbefd48056c8c121bdb8"),
          from_hex<Fq>(
              "13e02b6052719f607dacd3a088274f65596bd0d09920b61ab5da61bbdc7f5049334cf11213945d57e5ac7d055d042b7e")},
      Fq2{from_hex<Fq>(
              "0ce5d527727d6e118cc9cdc6da2e351aadfd9baa8cbdd3a76d429a695160d12c923ac9cc3baca289e193548608b82801"),
          from_hex<Fq>(
              "0606c4a02ea734cc32acd2b02bc28b99cb3e287e85a763af267492ab572e99ab3f370d275cec1da1aaa9075ff05f79be")});
  return point;
}

AffinePoint<bn254::G1Curve> bn254::G1Curve::generator() {
  static const bn254::G1Affine point = bn254::G1Affine::from_coordinates(Fq::from_uint64(1), Fq::from_uint64(2));
  return point;
}

AffinePoint<bn254::G2Curve> bn254::G2Curve::generator() {
  using bn254::Fq;
  static const bn254::G2Affine point = bn254::G2Affine::from_coordinates(
      bn254::Fq2{from_hex<Fq>("1800deef121f1e76426a00665e5c4479674322d4f75edadd46debd5cd992f6ed"),
                 from_hex<Fq>("198e9393920d483a7260bfb731fb5d25f1aa493335a9e71297e485b7aef312c2")},
      bn254::Fq2{from_hex<Fq>("12c85ea5db8c6deb4aab71808dcb408fe3d1e7690c43d37b4ce6cc0166fa7daa"),
                 from_hex<Fq>("090689d0585ff075ec9e99ad690c3395bc4b313370b38ef355acdadcd122975b")});
  return point;
}

}  // namespace stagehand::math
