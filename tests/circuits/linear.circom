pragma circom 2.0.0;

// Several public inputs, two public outputs, linear constraints (compiled with --O0 so circom
// keeps them) next to a few non-linear ones.
template Linear() {
  signal input x[4];
  signal input k;
  signal output sum;
  signal output weighted;
  signal scaled[4];
  for (var i = 0; i < 4; i++) {
    scaled[i] <== (i + 2) * x[i] + 5;
  }
  sum <== scaled[0] + scaled[1] + scaled[2] + scaled[3];
  signal product;
  product <== x[0] * k;
  weighted <== product * x[3] + 3 * sum;
}

component main {public [x]} = Linear();
