pragma circom 2.0.0;

// A non-linear chain of about 100 constraints: t[i] = t[i-1]^2 + x·i, one public input.
template Chain(n) {
  signal input x;
  signal input seed;
  signal output out;
  signal t[n];
  t[0] <== x * seed;
  for (var i = 1; i < n; i++) {
    t[i] <== t[i - 1] * t[i - 1] + x * i;
  }
  out <== t[n - 1] * seed;
}

component main {public [x]} = Chain(100);
