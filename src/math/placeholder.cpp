// Replaced by the BLS12-381 reference.
