// The crate against an installed libstagehand.so on a fixture circuit (tests/capi/rust_crate_test.sh
// runs it): STAGEHAND_TEST_DIR holds key.params (`stagehand setup --format params`) and
// assignment.bin (tests/capi/supraseal_c2_tool.cpp's layout); the proofs of the first test are
// written to proofs.bin there, for `snarkjs groth16 verify` to check against the exported vk. The
// library pairing-checks every proof before it returns it, so each Ok here is a verified proof.

use std::path::PathBuf;
use supraseal_c2::{
    generate_groth16_proof, generate_groth16_proofs, try_generate_groth16_proofs, Assignment, Proof, Scalar, EINVAL,
    SRS,
};

fn test_dir() -> PathBuf {
    PathBuf::from(std::env::var("STAGEHAND_TEST_DIR").expect(
        "STAGEHAND_TEST_DIR is not set: run these tests through ctest (rust_supraseal_c2), which makes the \
         parameters and the assignment",
    ))
}

/// The fixture's assignment, owned; `assignment()` points into it.
struct Fixture {
    inputs: usize,
    aux: usize,
    abc: usize,
    popcounts: [usize; 3],
    a_aux: Vec<u64>,
    b_inp: Vec<u64>,
    b_aux: Vec<u64>,
    values: Vec<Scalar>, // a, b, c, inputs, aux
}

impl Fixture {
    fn read() -> Fixture {
        let path = test_dir().join("assignment.bin");
        let bytes = std::fs::read(&path).unwrap_or_else(|error| panic!("cannot read {:?}: {}", path, error));
        let mut words = bytes.chunks_exact(8).map(|chunk| u64::from_le_bytes(chunk.try_into().unwrap()));
        let mut next = |count: usize| -> Vec<u64> { words.by_ref().take(count).collect() };
        let header = next(6);
        let (inputs, aux, abc) = (header[0] as usize, header[1] as usize, header[2] as usize);
        let (a_aux, b_inp, b_aux) = (next((aux + 63) / 64), next((inputs + 63) / 64), next((aux + 63) / 64));
        let limbs = next(4 * (3 * abc + inputs + aux));
        assert_eq!(limbs.len(), 4 * (3 * abc + inputs + aux), "{:?} is truncated", path);
        let values = limbs.chunks_exact(4).map(|l| Scalar([l[0], l[1], l[2], l[3]])).collect();
        let popcounts = [header[3] as usize, header[4] as usize, header[5] as usize];
        Fixture { inputs, aux, abc, popcounts, a_aux, b_inp, b_aux, values }
    }

    fn slice(&self, which: usize) -> &[Scalar] {
        let starts = [0, self.abc, 2 * self.abc, 3 * self.abc, 3 * self.abc + self.inputs];
        let lengths = [self.abc, self.abc, self.abc, self.inputs, self.aux];
        &self.values[starts[which]..starts[which] + lengths[which]]
    }

    fn assignment(&self) -> Assignment<Scalar> {
        Assignment {
            a_aux_density: self.a_aux.as_ptr() as *const usize,
            a_aux_bit_len: self.aux,
            a_aux_popcount: self.popcounts[0],
            b_inp_density: self.b_inp.as_ptr() as *const usize,
            b_inp_bit_len: self.inputs,
            b_inp_popcount: self.popcounts[1],
            b_aux_density: self.b_aux.as_ptr() as *const usize,
            b_aux_bit_len: self.aux,
            b_aux_popcount: self.popcounts[2],
            a: self.slice(0).as_ptr(),
            b: self.slice(1).as_ptr(),
            c: self.slice(2).as_ptr(),
            abc_size: self.abc,
            inp_assignment_data: self.slice(3).as_ptr(),
            inp_assignment_size: self.inputs,
            aux_assignment_data: self.slice(4).as_ptr(),
            aux_assignment_size: self.aux,
        }
    }
}

fn params() -> PathBuf {
    test_dir().join("key.params")
}

fn scalars(values: &[u64]) -> Vec<Scalar> {
    values.iter().map(|&value| Scalar([value, 0, 0, 0])).collect()
}

#[test]
fn three_circuits_in_one_call_through_cloned_and_cached_handles() {
    let fixture = Fixture::read();
    let srs = SRS::try_new(params(), true).expect("the fixture's parameters");
    let provers = [fixture.assignment(), fixture.assignment(), fixture.assignment()];
    let mut proofs = [Proof::default(); 3];
    generate_groth16_proofs(&provers, &scalars(&[1, 2, 3]), &scalars(&[4, 5, 6]), &mut proofs, &srs);
    let bytes: Vec<u8> = proofs.iter().flat_map(|proof| proof.to_bytes()).collect();
    std::fs::write(test_dir().join("proofs.bin"), bytes).expect("writing proofs.bin");
    assert!(proofs.iter().all(|proof| *proof != Proof::default()), "a proof was left unwritten");
    assert!(proofs[0] != proofs[1] && proofs[1] != proofs[2], "different r and s gave equal proofs");

    // A clone outlives the handle it came from, and a cached handle for the same path (evicted
    // after) proves the same bytes for the same r and s.
    let clone = srs.clone();
    drop(srs);
    let cached = SRS::try_new(params(), true).expect("the cached parameters");
    cached.evict();
    for handle in [&clone, &cached] {
        let mut again = [Proof::default()];
        generate_groth16_proofs(&provers[1..2], &scalars(&[2]), &scalars(&[5]), &mut again, handle);
        assert_eq!(again[0], proofs[1], "the same r and s gave other bytes");
    }
}

#[test]
fn the_shared_bitmap_form_gives_the_same_proofs() {
    let fixture = Fixture::read();
    let srs = SRS::try_new(params(), false).expect("the fixture's parameters");
    let (r_s, s_s) = (scalars(&[7, 8]), scalars(&[9, 10]));
    let mut expected = [Proof::default(); 2];
    generate_groth16_proofs(&[fixture.assignment(), fixture.assignment()], &r_s, &s_s, &mut expected, &srs);
    let pointers = |which: usize| vec![fixture.slice(which).as_ptr(); 2];
    let mut proofs = [Proof::default(); 2];
    generate_groth16_proof(
        &pointers(0), &pointers(1), &pointers(2), fixture.abc, &pointers(3), &pointers(4),
        fixture.inputs, fixture.aux, &fixture.a_aux, &fixture.b_inp, &fixture.b_aux,
        fixture.popcounts[0], fixture.popcounts[1], fixture.popcounts[2], 2, &r_s, &s_s, &mut proofs, &srs,
    );
    assert_eq!(proofs, expected);
}

#[test]
fn unreadable_parameters_are_errors_naming_the_file() {
    let missing = test_dir().join("no-such.params");
    let error = SRS::try_new(missing, false).expect_err("a missing file");
    assert_ne!(error.code, 0);
    assert!(error.message().contains("no-such.params"), "{}", error);
    let not_params = test_dir().join("assignment.bin");
    let error = SRS::try_new(not_params, true).expect_err("a file that is not parameters");
    assert_eq!(error.code, EINVAL, "{}", error);
    assert!(error.message().contains("assignment.bin"), "{}", error);
}

#[test]
fn sizes_that_disagree_are_errors_and_leave_the_proofs() {
    let fixture = Fixture::read();
    let srs = SRS::try_new(params(), true).expect("the fixture's parameters");
    let mut proofs = [Proof::default(); 2];
    let short = || {
        let mut assignment = fixture.assignment();
        assignment.aux_assignment_size -= 1;
        assignment
    };
    let error = try_generate_groth16_proofs(&[fixture.assignment(), short()], &scalars(&[1, 2]),
                                            &scalars(&[3, 4]), &mut proofs, &srs)
        .expect_err("an aux count one short");
    assert_eq!(error.code, EINVAL, "{}", error);
    assert!(error.message().contains("circuit 1") && error.message().contains("aux"), "{}", error);
    assert_eq!(proofs, [Proof::default(); 2], "proofs were written on an error");

    let error = try_generate_groth16_proofs(&[fixture.assignment()], &scalars(&[1, 2]), &scalars(&[3]),
                                            &mut proofs[..1], &srs)
        .expect_err("two r for one circuit");
    assert!(error.message().contains("1 assignments, but 2 r_s"), "{}", error);

    let mut small = [[0u8; 100]];
    let error = try_generate_groth16_proofs(&[fixture.assignment()], &scalars(&[1]), &scalars(&[2]), &mut small, &srs)
        .expect_err("a 100-byte proof type");
    assert!(error.message().contains("the proof type is 100 bytes"), "{}", error);

    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut one = [Proof::default()];
        generate_groth16_proofs(&[short()], &scalars(&[1]), &scalars(&[2]), &mut one, &srs);
    }));
    assert!(panicked.is_err(), "generate_groth16_proofs did not panic on a bad assignment");
}
