// The translation unit that builds the tests' precompiled headers (spira_test_pch in
// tests/CMakeLists.txt); it has no code of its own.
