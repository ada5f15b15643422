#include <stdexcept>

#include "math/g1.hpp"
#include "math/g2.hpp"

namespace stagehand::math {
namespace {

Fq fq_from_hex(std::string_view hex) {
  const auto value = Fq::from_canonical_limbs(detail::limbs_from_hex<Fq::limb_count>(hex));
  if (!value) throw std::logic_error("generator coordinate is not below q");
  return *value;
}

}  // namespace

AffinePoint<G1Curve> G1Curve::generator() {
  static const G1Affine point = G1Affine::from_coordinates(
      fq_from_hex("17f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bb"),
      fq_from_hex("08b3f481e3aaa0f1a09e30ed741d8ae4fcf5e095d5d00af600db18cb2c04b3edd03cc744a2888ae40caa232946c5e7e1"));
  return point;
}

AffinePoint<G2Curve> G2Curve::generator() {
  static const G2Affine point = G2Affine::from_coordinates(
      Fq2{fq_from_hex("024aa2b2f08f0a91260805272dc51051c6e47ad4fa403b02b4510b647ae3d1770bac0326a805bbefd48056c8c121bdb8"),
          fq_from_hex("13e02b6052719f607dacd3a088274f65596bd0d09920b61ab5da61bbdc7f5049334cf11213945d57e5ac7d055d042b7e")},
      Fq2{fq_from_hex("0ce5d527727d6e118cc9cdc6da2e351aadfd9baa8cbdd3a76d429a695160d12c923ac9cc3baca289e193548608b82801"),
          fq_from_hex("0606c4a02ea734cc32acd2b02bc28b99cb3e287e85a763af267492ab572e99ab3f370d275cec1da1aaa9075ff05f79be")});
  return point;
}

}  // namespace stagehand::math
