# add_cuda_lab(): one call makes all of a lab's targets.
#
#   add_cuda_lab(
#     STUDENT_SOURCES matmul.cu              # the file(s) the student edits, relative to the lab
#     TESTS tests/public_test.cpp            # public tests (plain C++, compiled once)
#     HIDDEN_TESTS hidden/hidden_test.cpp    # optional; skipped when absent (student release)
#     BENCHMARK bench/bench.cpp              # Google Benchmark main
#     BENCHMARK_LIBS CUDA::cublas)           # e.g. the vendor baseline
#
# The lab's name is its folder name. For the submission (LABS_SUBMISSION_DIR/<lab>/) it makes
# <lab>_student (the student's code), <lab>_test and <lab>_bench; with LABS_WITH_SOLUTIONS, the
# same again from solutions/<lab>/ as <lab>_solution_*. Tests and benchmark objects are
# compiled once and linked against each.
function(add_cuda_lab)
  cmake_parse_arguments(LAB "" "BENCHMARK" "STUDENT_SOURCES;TESTS;HIDDEN_TESTS;BENCHMARK_LIBS" ${ARGN})
  get_filename_component(lab "${CMAKE_CURRENT_SOURCE_DIR}" NAME)
  if(LABS_ONLY AND NOT lab IN_LIST LABS_ONLY)
    return()
  endif()
  set(lab_dir "${CMAKE_CURRENT_SOURCE_DIR}")

  set(test_sources ${LAB_TESTS})
  foreach(hidden IN LISTS LAB_HIDDEN_TESTS)
    if(EXISTS "${lab_dir}/${hidden}")
      list(APPEND test_sources ${hidden})
    endif()
  endforeach()
  add_library(${lab}_tests_obj OBJECT ${test_sources})
  target_include_directories(${lab}_tests_obj PUBLIC "${lab_dir}")
  target_link_libraries(${lab}_tests_obj PUBLIC labkit_testing)

  add_library(${lab}_bench_obj OBJECT ${LAB_BENCHMARK})
  target_include_directories(${lab}_bench_obj PUBLIC "${lab_dir}")
  target_link_libraries(${lab}_bench_obj PUBLIC labkit benchmark::benchmark ${LAB_BENCHMARK_LIBS})

  set(variants "${lab}|${LABS_SUBMISSION_DIR}/${lab}|${LABS_TEST_SUBMISSION}")
  if(LABS_WITH_SOLUTIONS)
    list(APPEND variants "${lab}_solution|${PROJECT_SOURCE_DIR}/solutions/${lab}|ON")
  endif()
  foreach(variant IN LISTS variants)
    string(REPLACE "|" ";" parts "${variant}")
    list(GET parts 0 prefix)
    list(GET parts 1 source_dir)
    list(GET parts 2 register_tests)

    set(student_sources "")
    foreach(file IN LISTS LAB_STUDENT_SOURCES)
      if(NOT EXISTS "${source_dir}/${file}")
        message(FATAL_ERROR "${lab}: ${source_dir}/${file} does not exist")
      endif()
      list(APPEND student_sources "${source_dir}/${file}")
    endforeach()
    add_library(${prefix}_student STATIC ${student_sources})
    target_include_directories(${prefix}_student PUBLIC "${lab_dir}")
    target_link_libraries(${prefix}_student PUBLIC CUDA::cudart)
    target_compile_options(${prefix}_student PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)

    add_executable(${prefix}_test)
    target_link_libraries(${prefix}_test PRIVATE ${lab}_tests_obj ${prefix}_student labkit_gtest_main)
    add_executable(${prefix}_bench)
    target_link_libraries(${prefix}_bench PRIVATE ${lab}_bench_obj ${prefix}_student)

    if(register_tests)
      gtest_discover_tests(${prefix}_test TEST_PREFIX "${prefix}:" DISCOVERY_TIMEOUT 60
                           PROPERTIES TIMEOUT 300 LABELS "gpu;${lab}")
      # A short benchmark run: checks the timed output against the baseline; skips without GPU.
      add_test(NAME ${prefix}:benchmark_smoke
               COMMAND ${prefix}_bench --smoke --benchmark_min_time=0.01)
      set_tests_properties(${prefix}:benchmark_smoke PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300
                           LABELS "gpu;${lab}")
    endif()
  endforeach()
endfunction()
