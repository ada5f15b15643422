// Writes the vectors that tests/math compares Stagehand's BLS12-381 and BN254 reference against.
// Every expected value comes from @noble/curves (fields, curve arithmetic, MSM, FFT, pairings) or
// from direct evaluation with noble's field arithmetic; nothing here calls Stagehand. BLS12-381's
// vectors are at the top level of the file, BN254's (the same sections, fewer NTT sizes, no H
// polynomial) under "bn254"; BLS12-381's come first from the random stream, so adding BN254 left
// them as they were.
//
// Usage: node generate.mjs --seed <integer> --output <file.json>
// The same seed gives the same file byte for byte. ctest's fixture math_vectors runs it (through
// prepare.cmake, after `npm ci` in the build tree); by hand, in a copy of this folder:
//   npm ci && node generate.mjs --seed 20261129 --output math_vectors.json
import { createHash } from 'node:crypto';
import { writeFileSync, renameSync } from 'node:fs';
import { bls12_381 } from '@noble/curves/bls12-381';
import { bn254 } from '@noble/curves/bn254';
import { rootsOfUnity, FFT } from '@noble/curves/abstract/fft';

function parseArguments(argv) {
  const options = { seed: null, output: null };
  for (let index = 0; index < argv.length; index++) {
    if (argv[index] === '--seed') options.seed = argv[++index];
    else if (argv[index] === '--output') options.output = argv[++index];
    else throw new Error(`unknown argument ${argv[index]}`);
  }
  if (options.seed === null || !/^[0-9]+$/.test(options.seed) || !options.output) {
    throw new Error('usage: node generate.mjs --seed <integer> --output <file.json>');
  }
  return options;
}

// A deterministic byte stream: SHA-256 of (seed, counter). Node's crypto is not under test.
class Random {
  constructor(seed) {
    this.seed = seed;
    this.counter = 0;
  }
  bytes(count) {
    const chunks = [];
    let produced = 0;
    while (produced < count) {
      const block = createHash('sha256').update(`stagehand-math-vectors:${this.seed}:${this.counter++}`).digest();
      chunks.push(block);
      produced += block.length;
    }
    return Buffer.concat(chunks).subarray(0, count);
  }
  bigint(bitCount) {
    const bytes = this.bytes(Math.ceil(bitCount / 8));
    let value = BigInt('0x' + bytes.toString('hex'));
    return value & ((1n << BigInt(bitCount)) - 1n);
  }
  // Uniform enough below `bound`: 64 extra bits make the modulo bias negligible.
  below(bound) {
    return this.bigint(bound.toString(2).length + 64) % bound;
  }
  integer(bound) {
    return Number(this.below(BigInt(bound)));
  }
}

const hex = (value) => '0x' + value.toString(16);
const hexFq2 = (value) => [hex(value.c0), hex(value.c1)];
function encodeG1(point) {
  if (point.is0()) return { infinity: true };
  const { x, y } = point.toAffine();
  return { x: hex(x), y: hex(y) };
}
function encodeG2(point) {
  if (point.is0()) return { infinity: true };
  const { x, y } = point.toAffine();
  return { x: hexFq2(x), y: hexFq2(y) };
}
function check(condition, message) {
  if (!condition) throw new Error(`vector generator self-check failed: ${message}`);
}

const options = parseArguments(process.argv.slice(2));
const random = new Random(options.seed);

// What differs between the curves, beyond what noble's curve object says.
const bls12_381Spec = {
  curve: bls12_381, frBits: 255, fqBits: 381, fqMontgomeryBits: 384, x: 0xd201000000010000n, xNegative: true,
  // noble's final exponentiation raises to 3·(q^12 - 1)/r (the Hayashida-Hayasaka-Teruya hard part).
  finalExponentFactor: () => 3n,
  g1Count: 24, g2Count: 12,
  ntt: { snarkjs: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14], classic: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12] },
  h: true,
};
const bn254Spec = {
  curve: bn254, frBits: 254, fqBits: 254, fqMontgomeryBits: 256, x: 4965661367192848881n, xNegative: false,
  // noble's hard part (Fuentes-Castañeda, Knapp, Rodríguez-Henríquez) raises to 2x(6x² + 3x + 1)·(q^12 - 1)/r.
  finalExponentFactor: (x) => 2n * x * (6n * x * x + 3n * x + 1n),
  g1Count: 16, g2Count: 12,
  ntt: { snarkjs: [1, 2, 3, 4, 5, 6, 7, 8, 10], classic: [1, 2, 3, 4, 6] },
  h: false,
};

// Every section of one curve. The functions inside read the curve's fields and groups.
function curveSuite(spec) {
  const { curve } = spec;
  const { Fr, Fp, Fp2, Fp6, Fp12 } = curve.fields;
  const G1 = curve.G1.Point;
  const G2 = curve.G2.Point;
  const r = Fr.ORDER;
  const q = Fp.ORDER;

  // ---------------------------------------------------------------------------------------------
  // Constants, as noble has them. The C++ side compares its own against these.
  function twoAdicity(order) {
    let count = 0;
    for (let value = order - 1n; (value & 1n) === 0n; value >>= 1n) count++;
    return count;
  }
  const frTwoAdicity = twoAdicity(r);
  const rootsFrom = (generator) => {
    const roots = [];
    for (let log = 0; log <= frTwoAdicity; log++) roots.push(hex(Fr.pow(generator, (r - 1n) >> BigInt(log))));
    return roots;
  };
  const constants = {
    fr_modulus: hex(r),
    fq_modulus: hex(q),
    fr_montgomery_r: hex((1n << 256n) % r),
    fr_montgomery_r_squared: hex((1n << 512n) % r),
    fq_montgomery_r: hex((1n << BigInt(spec.fqMontgomeryBits)) % q),
    fq_montgomery_r_squared: hex((1n << BigInt(2 * spec.fqMontgomeryBits)) % q),
    fr_two_adicity: frTwoAdicity,
    g1_b: hex(curve.G1.CURVE.b),
    g2_b: hexFq2(curve.G2.CURVE.b),
    g1_generator: encodeG1(G1.BASE),
    g2_generator: encodeG2(G2.BASE),
    // roots_from_5[k] = 5^((r-1)/2^k), the snarkjs roots; roots_from_7 likewise.
    roots_from_5: rootsFrom(5n),
    roots_from_7: rootsFrom(7n),
  };

  // ---------------------------------------------------------------------------------------------
  // Prime fields. Special values first (the edges of the reductions), then random ones.
  function specialValues(order, bitCount) {
    return [0n, 1n, 2n, order - 1n, order - 2n, (order - 1n) / 2n, (order + 1n) / 2n, (1n << 64n) - 1n, 1n << 64n,
      1n << BigInt(bitCount - 1), (1n << BigInt(bitCount - 1)) - 1n].map((value) => value % order);
  }
  function primeFieldVectors(field, bitCount, montgomeryBits, randomCount) {
    const order = field.ORDER;
    const values = specialValues(order, bitCount);
    for (let index = 0; index < randomCount; index++) values.push(random.below(order));
    // Squares of random values, so that square roots are exercised on residues every time.
    for (let index = 0; index < randomCount / 4; index++) values.push(field.sqr(random.below(order)));
    const montgomeryR = (1n << BigInt(montgomeryBits)) % order;
    const unary = values.map((a) => {
      const isSquare = a === 0n || field.pow(a, (order - 1n) / 2n) === 1n;
      let root = null;
      if (isSquare) {
        root = field.sqrt(a);
        check(field.sqr(root) === a, 'noble square root');
      }
      const exponent = random.bigint(256);
      return {
        a: hex(a),
        square: hex(field.sqr(a)),
        negation: hex(field.neg(a)),
        inverse: a === 0n ? null : hex(field.inv(a)),
        is_square: isSquare,
        sqrt: root === null ? null : hex(root),
        exponent: hex(exponent),
        power: hex(field.pow(a, exponent)),
        decimal: a.toString(10),
        montgomery: hex(field.mul(a, montgomeryR)),
        double_montgomery: hex(field.mul(field.mul(a, montgomeryR), montgomeryR)),
      };
    });
    const binary = [];
    for (let index = 0; index < values.length; index++) {
      const a = values[index];
      const b = index % 3 === 0 ? a : values[random.integer(values.length)];
      binary.push({
        a: hex(a), b: hex(b),
        sum: hex(field.add(a, b)), difference: hex(field.sub(a, b)), product: hex(field.mul(a, b)),
      });
    }
    return { unary, binary };
  }

  function fq2Vectors(randomCount) {
    const values = [Fp2.ZERO, Fp2.ONE, Fp2.neg(Fp2.ONE), Fp2.create({ c0: 0n, c1: 1n }), Fp2.create({ c0: q - 1n, c1: q - 1n }),
      Fp2.create({ c0: 2n, c1: 0n }), Fp2.create({ c0: 0n, c1: 2n })];
    for (let index = 0; index < randomCount; index++) values.push(Fp2.create({ c0: random.below(q), c1: random.below(q) }));
    for (let index = 0; index < randomCount / 4; index++) {
      values.push(Fp2.sqr(Fp2.create({ c0: random.below(q), c1: random.below(q) })));
    }
    // Residues with a zero or pure-imaginary root exercise the branches of the square root.
    values.push(Fp2.sqr(Fp2.create({ c0: 0n, c1: random.below(q) })));
    values.push(Fp2.sqr(Fp2.create({ c0: random.below(q), c1: 0n })));
    const unary = values.map((a) => {
      // Independent of noble's square root: a is a square exactly when its norm is one in Fp.
      const norm = Fp.add(Fp.sqr(a.c0), Fp.sqr(a.c1));
      const isSquare = norm === 0n || Fp.pow(norm, (q - 1n) / 2n) === 1n;
      let root = null;
      if (isSquare) {
        root = Fp2.sqrt(a);
        check(Fp2.eql(Fp2.sqr(root), a), 'noble Fp2 square root');
      }
      return {
        a: hexFq2(a),
        square: hexFq2(Fp2.sqr(a)),
        negation: hexFq2(Fp2.neg(a)),
        inverse: Fp2.is0(a) ? null : hexFq2(Fp2.inv(a)),
        is_square: isSquare,
        sqrt: root === null ? null : hexFq2(root),
      };
    });
    const binary = values.map((a, index) => {
      const b = index % 3 === 0 ? a : values[random.integer(values.length)];
      return {
        a: hexFq2(a), b: hexFq2(b),
        sum: hexFq2(Fp2.add(a, b)), difference: hexFq2(Fp2.sub(a, b)), product: hexFq2(Fp2.mul(a, b)),
      };
    });
    return { unary, binary };
  }

  // ---------------------------------------------------------------------------------------------
  // Curves.
  function curveVectors(Point, encode, field, randomCount, b, randomCoordinate) {
    const points = [Point.BASE];
    for (let index = 0; index < randomCount; index++) points.push(Point.BASE.multiply(1n + random.below(r - 1n)));
    const pick = () => points[random.integer(points.length)];

    const addition = [];
    for (let index = 0; index < randomCount; index++) {
      const p = pick();
      const other = pick();
      addition.push({ p: encode(p), q: encode(other), sum: encode(p.add(other)) });
    }
    const p = pick();
    for (const [left, right] of [[p, p], [p, p.negate()], [p, Point.ZERO], [Point.ZERO, p], [Point.ZERO, Point.ZERO]]) {
      addition.push({ p: encode(left), q: encode(right), sum: encode(left.add(right)) });
    }

    const doubling = points.map((point) => ({ p: encode(point), result: encode(point.double()) }));
    doubling.push({ p: encode(Point.ZERO), result: encode(Point.ZERO.double()) });

    const scalars = [0n, 1n, 2n, 3n, 15n, 16n, 17n, r - 1n, r - 2n, (1n << 128n) - 1n];
    for (let index = 0; index < randomCount; index++) scalars.push(random.below(r));
    const scalarMultiplication = scalars.map((k) => {
      const point = pick();
      return { p: encode(point), k: hex(k), result: encode(point.multiplyUnsafe(k)) };
    });

    // On-curve and subgroup checks on raw coordinates: subgroup points, points on the curve
    // outside the subgroup (x random, y from the curve equation), points off the curve.
    const equationRight = (x) => field.add(field.mul(field.sqr(x), x), b);
    const checks = [{ point: { infinity: true }, on_curve: true, in_subgroup: true }];
    for (const point of points.slice(0, 8)) checks.push({ point: encode(point), on_curve: true, in_subgroup: true });
    let onCurveOutside = 0;
    while (onCurveOutside < 8) {
      const x = randomCoordinate();
      let y;
      try {
        y = field.sqrt(equationRight(x));
      } catch {
        continue;
      }
      const point = Point.fromAffine({ x, y });
      checks.push({ point: encodeRaw(x, y), on_curve: true, in_subgroup: point.isTorsionFree() });
      onCurveOutside++;
    }
    for (let index = 0; index < 8; index++) {
      const x = randomCoordinate();
      const y = randomCoordinate();
      const onCurve = field.eql(field.sqr(y), equationRight(x));
      checks.push({ point: encodeRaw(x, y), on_curve: onCurve, in_subgroup: onCurve && Point.fromAffine({ x, y }).isTorsionFree() });
    }
    // A subgroup point with y negated is still in the subgroup; with x altered it falls off.
    const shifted = points[1].toAffine();
    checks.push({ point: encodeRaw(shifted.x, field.neg(shifted.y)), on_curve: true, in_subgroup: true });
    checks.push({ point: encodeRaw(field.add(shifted.x, field.ONE), shifted.y), on_curve: false, in_subgroup: false });
    return { addition, doubling, scalar_multiplication: scalarMultiplication, checks };

    function encodeRaw(x, y) {
      return typeof x === 'bigint' ? { x: hex(x), y: hex(y) } : { x: hexFq2(x), y: hexFq2(y) };
    }
  }

  // ---------------------------------------------------------------------------------------------
  // MSM cases. Points are consecutive multiples start + i·step (one addition each, all distinct)
  // with zero scalars, points at infinity, repeated points and opposite points mixed in.
  function msmCase(Point, encode, size, name, mutate) {
    const start = Point.BASE.multiply(1n + random.below(r - 1n));
    const step = Point.BASE.multiply(1n + random.below(r - 1n));
    const points = [];
    for (let index = 0, current = start; index < size; index++, current = current.add(step)) points.push(current);
    const scalars = [];
    for (let index = 0; index < size; index++) scalars.push(random.below(r));
    mutate(points, scalars);
    const result = Point.msm(points, scalars);
    if (size <= 100) {
      let naive = Point.ZERO;
      for (let index = 0; index < size; index++) naive = naive.add(points[index].multiplyUnsafe(scalars[index]));
      check(naive.equals(result), `noble msm against the naive sum (${name})`);
    }
    return { name, size, points: points.map(encode), scalars: scalars.map(hex), result: encode(result) };
  }
  function mixEdgeCases(points, scalars) {
    const size = points.length;
    const count = Math.max(1, Math.floor(size / 20));
    for (let index = 0; index < count; index++) scalars[random.integer(size)] = 0n;
    for (let index = 0; index < count; index++) points[random.integer(size)] = points[0].constructor.ZERO;
    for (let index = 0; index < count; index++) points[random.integer(size)] = points[random.integer(size)];
    for (let index = 0; index < count; index++) points[random.integer(size)] = points[random.integer(size)].negate();
    const edges = [1n, 2n, r - 1n, (1n << BigInt(spec.frBits - 1)), (1n << 64n) - 1n, (1n << 16n), (1n << 16n) - 1n];
    for (const edge of edges) scalars[random.integer(size)] = edge;
  }
  function msmVectors(Point, encode) {
    const zero = Point.ZERO;
    return [
      msmCase(Point, encode, 1, 'one point', () => {}),
      msmCase(Point, encode, 1, 'zero scalar', (points, scalars) => { scalars[0] = 0n; }),
      msmCase(Point, encode, 1, 'point at infinity', (points) => { points[0] = zero; }),
      msmCase(Point, encode, 1, 'scalar r - 1', (points, scalars) => { scalars[0] = r - 1n; }),
      msmCase(Point, encode, 2, 'two points', () => {}),
      msmCase(Point, encode, 2, 'repeated point', (points) => { points[1] = points[0]; }),
      msmCase(Point, encode, 2, 'repeated point and scalar', (points, scalars) => { points[1] = points[0]; scalars[1] = scalars[0]; }),
      msmCase(Point, encode, 2, 'opposite points cancel', (points, scalars) => { points[1] = points[0].negate(); scalars[1] = scalars[0]; }),
      msmCase(Point, encode, 3, 'three points', () => {}),
      msmCase(Point, encode, 3, 'infinity, zero and repeat', (points, scalars) => { points[1] = zero; scalars[2] = 0n; points[0] = points[2]; }),
      msmCase(Point, encode, 100, 'hundred points with edges', mixEdgeCases),
      msmCase(Point, encode, 4096, '2^12 points with edges', mixEdgeCases),
    ];
  }

  // ---------------------------------------------------------------------------------------------
  // NTT: full transforms from noble's FFT, cross-checked here against direct evaluation
  // (Horner's rule with noble's Fr) at sampled positions, which are also written out.
  function horner(coefficients, x) {
    let result = 0n;
    for (let index = coefficients.length - 1; index >= 0; index--) result = Fr.add(Fr.mul(result, x), coefficients[index]);
    return result;
  }
  function nttVectors(groupGenerator, convention, logSizes) {
    const roots = rootsOfUnity(Fr, groupGenerator);
    const fft = FFT(roots, Fr);
    const entries = [];
    for (const logSize of logSizes) {
      const size = 1 << logSize;
      const omega = Fr.pow(groupGenerator, (r - 1n) >> BigInt(logSize));
      const cosetGenerator = convention === 'snarkjs' ? Fr.pow(groupGenerator, (r - 1n) >> BigInt(logSize + 1)) : groupGenerator;
      const sizeInverse = Fr.inv(BigInt(size));
      const cosetInverse = Fr.inv(cosetGenerator);
      const powers = (base) => {
        const result = [Fr.ONE];
        for (let index = 1; index < size; index++) result.push(Fr.mul(result[index - 1], base));
        return result;
      };
      const cosetPowers = powers(cosetGenerator);
      const inverseCosetPowers = powers(cosetInverse);

      const coefficients = Array.from({ length: size }, () => random.below(r));
      const evaluations = fft.direct(coefficients);
      const cosetEvaluations = fft.direct(coefficients.map((c, i) => Fr.mul(c, cosetPowers[i])));
      const values = Array.from({ length: size }, () => random.below(r));
      const interpolated = fft.inverse(values);
      const cosetInterpolated = interpolated.map((c, i) => Fr.mul(c, inverseCosetPowers[i]));

      const sampleCount = Math.min(size, 24);
      const indices = size <= 24 ? [...Array(size).keys()] : [0, size - 1];
      while (indices.length < sampleCount) indices.push(random.integer(size));
      const samples = indices.map((index) => {
        const point = Fr.pow(omega, BigInt(index));
        const evaluation = horner(coefficients, point);
        const cosetEvaluation = horner(coefficients, Fr.mul(cosetGenerator, point));
        // Interpolation is evaluation at ω^-i scaled by 1/n: c_i = (1/n) Σ_j v_j ω^(-ij).
        const coefficient = Fr.mul(horner(values, Fr.inv(point)), sizeInverse);
        const cosetCoefficient = Fr.mul(coefficient, inverseCosetPowers[index]);
        check(evaluation === evaluations[index], `noble FFT against Horner at 2^${logSize}[${index}]`);
        check(cosetEvaluation === cosetEvaluations[index], `coset FFT against Horner at 2^${logSize}[${index}]`);
        check(coefficient === interpolated[index], `noble inverse FFT against direct interpolation at 2^${logSize}[${index}]`);
        return {
          index, evaluation: hex(evaluation), coset_evaluation: hex(cosetEvaluation),
          coefficient: hex(coefficient), coset_coefficient: hex(cosetCoefficient),
        };
      });
      // Above 2^12 the full coset vectors are left out to keep the file small; the samples
      // still check the coset transforms there.
      const full = logSize <= 12;
      entries.push({
        convention, group_generator: Number(groupGenerator), log_size: logSize, root: hex(omega),
        coset_generator: hex(cosetGenerator), coefficients: coefficients.map(hex), evaluations: evaluations.map(hex),
        coset_evaluations: full ? cosetEvaluations.map(hex) : null, values: values.map(hex),
        interpolated: interpolated.map(hex), coset_interpolated: full ? cosetInterpolated.map(hex) : null, samples,
      });
    }
    return entries;
  }

  // ---------------------------------------------------------------------------------------------
  // H polynomial, computed without any FFT: interpolation by the direct inverse transform,
  // then either evaluation at ω_2n^(2j+1) (snarkjs) or schoolbook A·B - C and long division by
  // x^n - 1 (classic).
  function interpolateDirect(values, omega) {
    const size = values.length;
    const sizeInverse = Fr.inv(BigInt(size));
    const omegaInverse = Fr.inv(omega);
    return values.map((_, i) => Fr.mul(horner(values, Fr.pow(omegaInverse, BigInt(i))), sizeInverse));
  }
  function hVectors(convention, logSizes, satisfied) {
    const groupGenerator = convention === 'snarkjs' ? 5n : 7n;
    const entries = [];
    for (const logSize of logSizes) {
      const size = 1 << logSize;
      const omega = Fr.pow(groupGenerator, (r - 1n) >> BigInt(logSize));
      const a = Array.from({ length: size }, () => random.below(r));
      const b = Array.from({ length: size }, () => random.below(r));
      const c = satisfied ? a.map((value, index) => Fr.mul(value, b[index])) : Array.from({ length: size }, () => random.below(r));
      const [polynomialA, polynomialB, polynomialC] = [a, b, c].map((values) => interpolateDirect(values, omega));
      let expected;
      if (convention === 'snarkjs') {
        const doubleRoot = Fr.pow(groupGenerator, (r - 1n) >> BigInt(logSize + 1));
        expected = a.map((_, j) => {
          const x = Fr.pow(doubleRoot, BigInt(2 * j + 1));
          return Fr.sub(Fr.mul(horner(polynomialA, x), horner(polynomialB, x)), horner(polynomialC, x));
        });
      } else {
        const product = new Array(2 * size).fill(0n);
        for (let i = 0; i < size; i++) {
          for (let j = 0; j < size; j++) product[i + j] = Fr.add(product[i + j], Fr.mul(polynomialA[i], polynomialB[j]));
        }
        for (let i = 0; i < size; i++) product[i] = Fr.sub(product[i], polynomialC[i]);
        // Long division by x^n - 1: x^k = x^(k-n)·(x^n - 1) + x^(k-n).
        const quotient = new Array(size).fill(0n);
        for (let k = 2 * size - 1; k >= size; k--) {
          quotient[k - size] = product[k];
          product[k - size] = Fr.add(product[k - size], product[k]);
          product[k] = 0n;
        }
        check(product.every((value) => value === 0n), `x^n - 1 divides A·B - C at 2^${logSize}`);
        expected = quotient;
      }
      entries.push({ convention, log_size: logSize, satisfied, a: a.map(hex), b: b.map(hex), c: c.map(hex), expected: expected.map(hex) });
    }
    return entries;
  }

  // ---------------------------------------------------------------------------------------------
  // Fq6, Fq12 and the pairing. An Fq12 value is written as its six Fq2 coefficients in noble's
  // order: c0.c0, c0.c1, c0.c2, c1.c0, c1.c1, c1.c2 (Fp12 = Fp6[w]/(w² - v), Fp6 = Fp2[v]/(v³ - ξ),
  // ξ = u + 1 for BLS12-381 and u + 9 for BN254).
  const hexFq6 = (value) => [hexFq2(value.c0), hexFq2(value.c1), hexFq2(value.c2)];
  const hexFq12 = (value) => [...hexFq6(value.c0), ...hexFq6(value.c1)];
  const randomFq2 = () => Fp2.create({ c0: random.below(q), c1: random.below(q) });
  const randomFq6 = () => Fp6.create({ c0: randomFq2(), c1: randomFq2(), c2: randomFq2() });
  const randomFq12 = () => Fp12.create({ c0: randomFq6(), c1: randomFq6() });
  function towerVectors(randomCount) {
    const fq6 = [];
    for (let index = 0; index < randomCount; index++) {
      const a = randomFq6();
      const b = randomFq6();
      fq6.push({ a: hexFq6(a), b: hexFq6(b), product: hexFq6(Fp6.mul(a, b)), square: hexFq6(Fp6.sqr(a)), inverse: hexFq6(Fp6.inv(a)) });
    }
    const fq12 = [];
    for (let index = 0; index < randomCount; index++) {
      const a = randomFq12();
      const b = randomFq12();
      const exponent = random.bigint(128);
      fq12.push({
        a: hexFq12(a), b: hexFq12(b), product: hexFq12(Fp12.mul(a, b)), square: hexFq12(Fp12.sqr(a)),
        inverse: hexFq12(Fp12.inv(a)), conjugate: hexFq12(Fp12.conjugate(a)),
        frobenius: [1, 2, 3, 6].map((power) => ({ power, value: hexFq12(Fp12.frobeniusMap(a, power)) })),
        exponent: hex(exponent), power: hexFq12(Fp12.pow(a, exponent)),
      });
    }
    return { fq6, fq12 };
  }
  function pairingVectors(randomCount) {
    const pairing = curve.pairing;
    const finalExponent = spec.finalExponentFactor(spec.x) * ((q ** 12n - 1n) / r);
    const finalExponentiation = [];
    for (let index = 0; index < 3; index++) {
      const f = randomFq12();
      const value = Fp12.finalExponentiate(f);
      if (index === 0) check(Fp12.eql(value, Fp12.pow(f, finalExponent)), 'noble final exponentiation is the power named in the spec');
      finalExponentiation.push({ f: hexFq12(f), value: hexFq12(value) });
    }
    const generatorValue = pairing(G1.BASE, G2.BASE);
    check(!Fp12.eql(generatorValue, Fp12.ONE), 'e(G1, G2) is not 1');
    check(Fp12.eql(Fp12.pow(generatorValue, r), Fp12.ONE), 'e(G1, G2) has order r');
    const pairs = [];
    for (let index = 0; index < randomCount; index++) {
      const a = 1n + random.below(r - 1n);
      const b = 1n + random.below(r - 1n);
      const p = G1.BASE.multiply(a);
      const qPoint = G2.BASE.multiply(b);
      const value = pairing(p, qPoint);
      // Bilinearity, checked here by noble against e(G1, G2)^(ab).
      check(Fp12.eql(value, Fp12.pow(generatorValue, Fr.mul(a, b))), 'noble bilinearity');
      pairs.push({ a: hex(a), b: hex(b), p: encodeG1(p), q: encodeG2(qPoint), value: hexFq12(value) });
    }
    // A product of pairings (one final exponentiation), and one that is the identity of GT:
    // e(a·G1, b·G2)·e(-(ab)·G1, G2)·e(c·G1, d·G2)·e(G1, -(cd)·G2) = 1.
    const products = [];
    for (let index = 0; index < 3; index++) {
      const batch = [];
      for (let k = 0; k < 3; k++) batch.push({ g1: G1.BASE.multiply(1n + random.below(r - 1n)), g2: G2.BASE.multiply(1n + random.below(r - 1n)) });
      products.push({ pairs: batch.map(({ g1, g2 }) => ({ p: encodeG1(g1), q: encodeG2(g2) })), value: hexFq12(curve.pairingBatch(batch)) });
    }
    const [a, b, c, d] = [0, 1, 2, 3].map(() => 1n + random.below(r - 1n));
    const identityBatch = [
      { g1: G1.BASE.multiply(a), g2: G2.BASE.multiply(b) },
      { g1: G1.BASE.multiply(Fr.mul(a, b)).negate(), g2: G2.BASE },
      { g1: G1.BASE.multiply(c), g2: G2.BASE.multiply(d) },
      { g1: G1.BASE, g2: G2.BASE.multiply(Fr.mul(c, d)).negate() },
    ];
    const identityValue = curve.pairingBatch(identityBatch);
    check(Fp12.eql(identityValue, Fp12.ONE), 'the GT identity product is 1');
    products.push({ pairs: identityBatch.map(({ g1, g2 }) => ({ p: encodeG1(g1), q: encodeG2(g2) })), value: hexFq12(identityValue) });
    return {
      x: hex(spec.x), x_negative: spec.xNegative, final_exponent_factor: hex(spec.finalExponentFactor(spec.x)),
      final_exponentiation: finalExponentiation,
      generators: { p: encodeG1(G1.BASE), q: encodeG2(G2.BASE), value: hexFq12(generatorValue) },
      pairs, products,
    };
  }

  return {
    constants,
    fr: primeFieldVectors(Fr, spec.frBits, 256, 48),
    fq: primeFieldVectors(Fp, spec.fqBits, spec.fqMontgomeryBits, 48),
    fq2: fq2Vectors(48),
    g1: curveVectors(G1, encodeG1, Fp, spec.g1Count, curve.G1.CURVE.b, () => random.below(q)),
    g2: curveVectors(G2, encodeG2, Fp2, spec.g2Count, curve.G2.CURVE.b, () => Fp2.create({ c0: random.below(q), c1: random.below(q) })),
    msm: { g1: msmVectors(G1, encodeG1), g2: msmVectors(G2, encodeG2) },
    ntt_vectors: [...nttVectors(5n, 'snarkjs', spec.ntt.snarkjs), ...nttVectors(7n, 'classic', spec.ntt.classic)],
    ...(spec.h ? {
      h: [
        ...hVectors('snarkjs', [1, 2, 3, 4, 5, 6, 7, 8], true),
        ...hVectors('snarkjs', [1, 3, 6], false),
        ...hVectors('classic', [1, 2, 3, 4, 5, 6, 7, 8], true),
      ],
    } : {}),
    tower: towerVectors(8),
    pairing: pairingVectors(6),
  };
}

// ---------------------------------------------------------------------------------------------
const started = Date.now();
const vectors = {
  generator: { seed: options.seed, noble_curves: '1.9.7', node: process.version },
  ...curveSuite(bls12_381Spec),
};
vectors.bn254 = curveSuite(bn254Spec);
// zcash's compressed point encoding (the flags bits; what filecoin-proofs stores a proof in), as
// noble writes it: random points of G1 and G2, each with its negation (the sign flag either way),
// and the points at infinity. Made after every other section, so that their values stay as they were.
vectors.zcash_compressed = (() => {
  const { G1, G2 } = bls12_381;
  const r = bls12_381.fields.Fr.ORDER;
  const bytesHex = (bytes) => Buffer.from(bytes).toString('hex');
  const entries = (Point, encode) => {
    const out = [];
    for (let index = 0; index < 6; index++) {
      const point = Point.BASE.multiply(1n + random.below(r - 1n));
      for (const p of [point, point.negate()]) out.push({ point: encode(p), compressed: bytesHex(p.toBytes(true)) });
    }
    out.push({ point: encode(Point.ZERO), compressed: bytesHex(Point.ZERO.toBytes(true)) });
    return out;
  };
  return { g1: entries(G1.Point, encodeG1), g2: entries(G2.Point, encodeG2) };
})();
const temporary = `${options.output}.partial`;
writeFileSync(temporary, JSON.stringify(vectors));
renameSync(temporary, options.output);
console.log(`wrote ${options.output} (seed ${options.seed}, @noble/curves 1.9.7, ${((Date.now() - started) / 1000).toFixed(1)} s)`);
