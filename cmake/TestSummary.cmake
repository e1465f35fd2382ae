# The last word of the presets' test step: a line saying how many tests did not run, and why.
#
# CTest's own summary counts a skipped test as passed ("100% tests passed ... out of 179" when
# all 179 skipped for want of a GPU). CTest reads CTestCustom.cmake from the build folder and
# runs its CTEST_CUSTOM_POST_TEST commands after that summary: here, cmake/test_summary.py on the
# JUnit XML that the presets' test step writes (output.outputJUnitFile = ctest-results.xml in
# CMakePresets.json, a path relative to this build folder). Where tests were skipped it prints
#   NOTE: 472 of 586 tests did not run: no CUDA GPU on this machine (...); they are not passed
# and it never changes CTest's exit status. A plain `ctest` run writes no results file: nothing
# is printed then. The output kept of a passed (or skipped) test is raised from CTest's 1024
# bytes, so that the skip message, after the test program's first lines, is in the results.
find_package(Python3 3.9 REQUIRED COMPONENTS Interpreter)
set(LABS_TEST_RESULTS "${CMAKE_BINARY_DIR}/ctest-results.xml")
file(WRITE "${CMAKE_BINARY_DIR}/CTestCustom.cmake"
  "# Written by cmake/TestSummary.cmake: after the tests, say how many did not run, and why.\n"
  "set(CTEST_CUSTOM_POST_TEST \"\\\"${Python3_EXECUTABLE}\\\" "
  "\\\"${CMAKE_CURRENT_LIST_DIR}/test_summary.py\\\" \\\"${LABS_TEST_RESULTS}\\\"\")\n"
  "set(CTEST_CUSTOM_MAXIMUM_PASSED_TEST_OUTPUT_SIZE 8192)\n")
