"""Test helpers shared by the tests of tests/fuzz."""
