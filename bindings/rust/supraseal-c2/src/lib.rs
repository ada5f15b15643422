//! SupraSeal C2's Rust API (`SRS`, `Assignment`, `generate_groth16_proofs`,
//! `generate_groth16_proof`) over the C ABI that Stagehand's `libstagehand.so` exports
//! (`include/stagehand/supraseal_c2.h`), so that a Filecoin build takes Stagehand's prover through
//! `[patch.crates-io]` with no change to its callers (see README.md).
//!
//! The scalar type `S` and the proof type `PR` stay generic, as in the crate this one replaces: the
//! library reads `S` as BLS12-381's Fr in Montgomery form (32 bytes, four little-endian u64 limbs:
//! blstrs's `Scalar`, this crate's [`Scalar`]) and writes `PR` as a 384-byte affine proof
//! (bellperson's `Proof<Bls12>`, this crate's [`Proof`]). Types of other sizes are refused.
//!
//! Unlike the crate it replaces, every call has a `try_` form returning the library's error
//! (the circuit and the field it names); the forms without `try_` panic with it, as before.

use core::ffi::c_void;
use std::ffi::{CStr, CString};
use std::fmt;
use std::os::raw::{c_char, c_int};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// errno's EINVAL, the code of the errors this crate finds itself (bad lengths, types, paths).
pub const EINVAL: i32 = 22;

/// The C ABI's `RustError`: code 0 or an errno value, and a message the caller frees.
#[repr(C)]
struct RawError {
    code: c_int,
    message: *mut c_char,
}

extern "C" {
    fn free(pointer: *mut c_void);
    fn create_SRS(ret: *mut SRS, srs_path: *const c_char, cache: bool) -> RawError;
    fn evict_SRS(by_ref: *const SRS);
    fn drop_SRS(by_ref: *mut SRS);
    fn clone_SRS(by_ref: *const SRS) -> SRS;
    fn generate_groth16_proofs_c(
        provers: *const c_void,
        num_circuits: usize,
        r_s: *const c_void,
        s_s: *const c_void,
        proofs: *mut c_void,
        srs: *const SRS,
    ) -> RawError;
}

/// An error from the library (an errno value and its message) or from this crate's own checks.
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    /// errno's value: EINVAL for bad arguments, files and sizes, ENOMEM, EIO for anything else.
    pub code: i32,
    message: String,
}

impl Error {
    fn invalid(message: String) -> Self {
        Error { code: EINVAL, message }
    }

    /// Takes the library's error, freeing its message: Ok for code 0.
    fn check(raw: RawError) -> Result<(), Error> {
        let message = if raw.message.is_null() {
            format!("libstagehand error {} (no message)", raw.code)
        } else {
            // SAFETY: the library returns a NUL-terminated malloc'd text that the caller owns.
            let text = unsafe { CStr::from_ptr(raw.message) }.to_string_lossy().into_owned();
            unsafe { free(raw.message as *mut c_void) };
            text
        };
        if raw.code == 0 {
            Ok(())
        } else {
            Err(Error { code: raw.code, message })
        }
    }

    /// The message, naming the call, and where an assignment is at fault its circuit and field.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Error {}

impl From<Error> for String {
    fn from(error: Error) -> Self {
        error.to_string()
    }
}

/// The name the replaced crate gives its error type (`cuda::Error`).
pub mod cuda {
    pub use super::Error;
}

/// BLS12-381's Fr in Montgomery form (R = 2^256 mod r), four little-endian u64 limbs below r:
/// the layout of blstrs's `Scalar`, for callers without blstrs.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Scalar(pub [u64; 4]);

/// An affine G1 point as blst lays it out: Fq coordinates in Montgomery form, six little-endian
/// u64 limbs each; the point at infinity is all zeros.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct G1Affine {
    pub x: [u64; 6],
    pub y: [u64; 6],
}

/// An affine G2 point as blst lays it out: each coordinate c0 then c1.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct G2Affine {
    pub x: [[u64; 6]; 2],
    pub y: [[u64; 6]; 2],
}

/// A proof, 384 bytes: bellperson's `#[repr(C)] Proof<Bls12>`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Proof {
    pub a: G1Affine,
    pub b: G2Affine,
    pub c: G1Affine,
}

impl Proof {
    /// The C ABI's `groth16_proof` bytes: every limb little-endian, A, B, C in order.
    pub fn to_bytes(&self) -> Vec<u8> {
        let limbs = self.a.x.iter().chain(&self.a.y);
        let limbs = limbs.chain(self.b.x.iter().flatten()).chain(self.b.y.iter().flatten());
        let limbs = limbs.chain(&self.c.x).chain(&self.c.y);
        limbs.flat_map(|limb| limb.to_le_bytes()).collect()
    }
}

/// A reference-counted handle on one parameters (`.params`) file, read and checked.
#[repr(C)]
pub struct SRS {
    ptr: *const c_void,
}

impl Default for SRS {
    fn default() -> Self {
        SRS { ptr: core::ptr::null() }
    }
}

impl SRS {
    /// Reads and checks the parameters at `srs_path`. With `cache`, shares the parameters of an
    /// earlier handle for the same path (the library keeps the four most recently used).
    pub fn try_new(srs_path: PathBuf, cache: bool) -> Result<Self, Error> {
        let path = CString::new(srs_path.as_os_str().as_bytes())
            .map_err(|_| Error::invalid(format!("SRS::try_new: the path {:?} contains a NUL byte", srs_path)))?;
        let mut srs = SRS::default();
        // SAFETY: srs is a valid SRS and path a NUL-terminated string, both alive for the call.
        Error::check(unsafe { create_SRS(&mut srs, path.as_ptr(), cache) })?;
        assert!(!srs.ptr.is_null(), "create_SRS succeeded without a handle");
        Ok(srs)
    }

    /// Forgets this handle's path in the library's cache; handles already made stay valid.
    pub fn evict(&self) {
        // SAFETY: self is a handle made by create_SRS or clone_SRS (or null, which is ignored).
        unsafe { evict_SRS(self) };
    }
}

impl Drop for SRS {
    fn drop(&mut self) {
        // SAFETY: as in evict; drop_SRS gives back this handle's reference and nulls ptr.
        unsafe { drop_SRS(self) };
        self.ptr = core::ptr::null();
    }
}

impl Clone for SRS {
    fn clone(&self) -> Self {
        // SAFETY: as in evict; the new handle holds a reference of its own.
        unsafe { clone_SRS(self) }
    }
}

impl fmt::Debug for SRS {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "SRS({:p})", self.ptr)
    }
}

// The library's handles may be used from any thread, by several at once.
unsafe impl Send for SRS {}
unsafe impl Sync for SRS {}

/// One circuit's assignment, the C ABI's `Assignment` in its field order. Density bitmaps are
/// u64 words (bit i in bit i % 64 of word i / 64) with their length in bits and their number of
/// set bits: a_aux over the aux values with an A-query point, b_inp and b_aux over the inputs and
/// aux values with B-query points. a, b and c hold abc_size evaluations each, at most the
/// parameters' domain; the inputs start with the constant one.
#[repr(C)]
pub struct Assignment<Scalar> {
    pub a_aux_density: *const usize,
    pub a_aux_bit_len: usize,
    pub a_aux_popcount: usize,

    pub b_inp_density: *const usize,
    pub b_inp_bit_len: usize,
    pub b_inp_popcount: usize,

    pub b_aux_density: *const usize,
    pub b_aux_bit_len: usize,
    pub b_aux_popcount: usize,

    pub a: *const Scalar,
    pub b: *const Scalar,
    pub c: *const Scalar,
    pub abc_size: usize,

    pub inp_assignment_data: *const Scalar,
    pub inp_assignment_size: usize,

    pub aux_assignment_data: *const Scalar,
    pub aux_assignment_size: usize,
}

/// The sizes the library reads `S` and `PR` with, checked before any pointer crosses over.
fn check_layouts<S, PR>(function: &str) -> Result<(), Error> {
    if std::mem::size_of::<S>() != 32 || std::mem::size_of::<usize>() != 8 {
        return Err(Error::invalid(format!(
            "{}: the scalar type is {} bytes, but the library reads 32-byte Montgomery Fr values (usize of 8)",
            function,
            std::mem::size_of::<S>()
        )));
    }
    if std::mem::size_of::<PR>() != 384 {
        return Err(Error::invalid(format!(
            "{}: the proof type is {} bytes, but the library writes 384-byte proofs",
            function,
            std::mem::size_of::<PR>()
        )));
    }
    Ok(())
}

/// One proof per assignment into `proofs`, with `r_s[i]` and `s_s[i]` as circuit i's r and s
/// (Montgomery Fr). Every assignment is checked against the parameters first and every proof
/// pairing-checked; on an error `proofs` is left as it was.
pub fn try_generate_groth16_proofs<S, PR>(
    provers: &[Assignment<S>],
    r_s: &[S],
    s_s: &[S],
    proofs: &mut [PR],
    srs: &SRS,
) -> Result<(), Error> {
    const FUNCTION: &str = "generate_groth16_proofs";
    check_layouts::<S, PR>(FUNCTION)?;
    let circuits = provers.len();
    if r_s.len() != circuits || s_s.len() != circuits || proofs.len() != circuits {
        return Err(Error::invalid(format!(
            "{}: {} assignments, but {} r_s, {} s_s and {} proofs",
            FUNCTION,
            circuits,
            r_s.len(),
            s_s.len(),
            proofs.len()
        )));
    }
    // SAFETY: the slices hold `circuits` elements of the sizes the library reads (checked above);
    // the assignments' own pointers are the caller's to make valid for their sizes.
    Error::check(unsafe {
        generate_groth16_proofs_c(
            provers.as_ptr() as *const c_void,
            circuits,
            r_s.as_ptr() as *const c_void,
            s_s.as_ptr() as *const c_void,
            proofs.as_mut_ptr() as *mut c_void,
            srs,
        )
    })
}

/// `try_generate_groth16_proofs`, panicking with the error as the replaced crate does.
pub fn generate_groth16_proofs<S, PR>(
    provers: &[Assignment<S>],
    r_s: &[S],
    s_s: &[S],
    proofs: &mut [PR],
    srs: &SRS,
) {
    if let Err(error) = try_generate_groth16_proofs(provers, r_s, s_s, proofs, srs) {
        panic!("{}", error);
    }
}

/// Proofs for `num_circuits` circuits of one shape: per circuit a pointer to its a, b, c
/// (`ntt_scalars_actual_size` each), inputs and aux values; the density bitmaps shared by all.
/// Panics on an error, as the replaced crate does.
#[allow(clippy::too_many_arguments)]
pub fn generate_groth16_proof<S, D, PR>(
    ntt_a_scalars: &[*const S],
    ntt_b_scalars: &[*const S],
    ntt_c_scalars: &[*const S],
    ntt_scalars_actual_size: usize,
    input_assignments: &[*const S],
    aux_assignments: &[*const S],
    input_assignments_size: usize,
    aux_assignments_size: usize,
    a_aux_density_bv: &[D],
    b_g1_input_density_bv: &[D],
    b_g1_aux_density_bv: &[D],
    a_aux_total_density: usize,
    b_g1_input_total_density: usize,
    b_g1_aux_total_density: usize,
    num_circuits: usize,
    r_s: &[S],
    s_s: &[S],
    proofs: &mut [PR],
    srs: &SRS,
) {
    for (name, length) in [
        ("ntt_a_scalars", ntt_a_scalars.len()),
        ("ntt_b_scalars", ntt_b_scalars.len()),
        ("ntt_c_scalars", ntt_c_scalars.len()),
        ("input_assignments", input_assignments.len()),
        ("aux_assignments", aux_assignments.len()),
    ] {
        assert_eq!(length, num_circuits, "generate_groth16_proof: {} for {} circuits", name, num_circuits);
    }
    assert_eq!(std::mem::size_of::<D>(), 8, "generate_groth16_proof: bitmaps must be of 64-bit words");
    let words = |bits: usize| (bits + 63) / 64;
    assert!(a_aux_density_bv.len() >= words(aux_assignments_size), "a_aux_density_bv is too short");
    assert!(b_g1_aux_density_bv.len() >= words(aux_assignments_size), "b_g1_aux_density_bv is too short");
    assert!(b_g1_input_density_bv.len() >= words(input_assignments_size), "b_g1_input_density_bv is too short");
    let provers: Vec<Assignment<S>> = (0..num_circuits)
        .map(|circuit| Assignment {
            a_aux_density: a_aux_density_bv.as_ptr() as *const usize,
            a_aux_bit_len: aux_assignments_size,
            a_aux_popcount: a_aux_total_density,
            b_inp_density: b_g1_input_density_bv.as_ptr() as *const usize,
            b_inp_bit_len: input_assignments_size,
            b_inp_popcount: b_g1_input_total_density,
            b_aux_density: b_g1_aux_density_bv.as_ptr() as *const usize,
            b_aux_bit_len: aux_assignments_size,
            b_aux_popcount: b_g1_aux_total_density,
            a: ntt_a_scalars[circuit],
            b: ntt_b_scalars[circuit],
            c: ntt_c_scalars[circuit],
            abc_size: ntt_scalars_actual_size,
            inp_assignment_data: input_assignments[circuit],
            inp_assignment_size: input_assignments_size,
            aux_assignment_data: aux_assignments[circuit],
            aux_assignment_size: aux_assignments_size,
        })
        .collect();
    generate_groth16_proofs(&provers, r_s, s_s, proofs, srs);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_match_the_c_abi() {
        assert_eq!(std::mem::size_of::<Scalar>(), 32);
        assert_eq!(std::mem::size_of::<Proof>(), 384);
        assert_eq!(std::mem::size_of::<SRS>(), std::mem::size_of::<*const c_void>());
        assert_eq!(std::mem::size_of::<Assignment<Scalar>>(), 17 * 8);
    }

    #[test]
    fn proof_bytes_are_little_endian_limbs_in_order() {
        let mut proof = Proof::default();
        proof.a.x[0] = 0x0102;
        proof.b.x[1][0] = 0x03;
        proof.c.y[5] = 0x04 << 56;
        let bytes = proof.to_bytes();
        assert_eq!(bytes.len(), 384);
        assert_eq!((bytes[0], bytes[1]), (0x02, 0x01));
        assert_eq!(bytes[96 + 48], 0x03);
        assert_eq!(bytes[383], 0x04);
        assert_eq!(bytes.iter().filter(|&&byte| byte != 0).count(), 4);
    }
}
