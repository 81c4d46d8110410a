"""Test helpers shared by the tests of tests/templating_pool."""
