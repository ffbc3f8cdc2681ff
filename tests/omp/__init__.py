"""Tests of the OMP part: installer, ACP driver, and the extension running in the real omp."""
