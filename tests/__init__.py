"""The test suite, a package so that tests share helpers as `tests.support.*` imports."""
