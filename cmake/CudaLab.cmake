# add_cuda_lab(): one call makes all of a lab's targets.
#
#   add_cuda_lab(
#     INTERFACE matmul.h                     # the lab's header: launchers and variant table
#     WORKER worker.cpp                      # binds the variant table through the op family
#     CASES                                  # tests as data: tests/cases.toml, and
#                                            # hidden/cases.toml where present (grader/cases.py
#                                            # reads them at configure time into the test
#                                            # program)
#     TESTS tests/cases.cpp                  # binds them to the family's driver (every lab);
#                                            # plus any C++ test of what the data cannot say
#     HIDDEN_TESTS hidden/extra_test.cpp     # optional C++ hidden tests; skipped when absent
#                                            # (student release); no lab has one today
#     TEST_LIBS labkit_matmul                # the op family's judge side
#     BENCHMARK bench/bench.cpp              # the lab's benchmark list (labkit::bench::main)
#     BENCHMARK_LIBS labkit_matmul_bench)    # the family's baseline (cuBLAS here)
#     WORKER_LIBS labkit_conv_worker         # optional: runner code the lab gives the student
#                                            # (linked after the student's objects)
#     HELPER_VARIANTS v1_im2col              # optional: the only variants WORKER_LIBS is given
#     WORKER_STUB_LIBS labkit_conv_worker_stub)  # ...and what the others get in its place
#
# The student's files are named once, in the lab's grading.toml (`student_files = [...]`), read
# at configure time by the grader's own reader (cmake/lab_config.py; needs Python 3.11).
# The lab's name is its folder name. Targets:
#   <lab>_student   object library: the student's files from LABS_SUBMISSION_DIR/<lab>/
#   <lab>_worker    the runner's objects, then the binding, then the student's objects
#   <lab>_helper_worker  only with HELPER_VARIANTS: the same, linked with WORKER_LIBS; the
#                   judges run those variants' calls in it (--labkit-worker-for), every other
#                   variant in <lab>_worker, which then links WORKER_STUB_LIBS instead
#   <lab>_test      the test judge (no student code; starts a worker)
#   <lab>_bench     the benchmark judge (no student code; starts a worker)
# With LABS_WITH_SOLUTIONS, also <lab>_solution_student and <lab>_solution_worker (and
# <lab>_solution_helper_worker) from solutions/<lab>/, whose tests CTest runs through the same
# judges.
#
# Why two workers (HELPER_VARIANTS): a library linked into a worker is loaded in it, and code of
# any variant in that process can find it at run time through the loader's own tables, with no
# import for the policy to see (docs/threat-model.md). The sandbox forbids loading a library, so
# a process that never had it cannot reach it: the variants not given the helper run where it
# is not linked at all, and its functions there are stubs that fail the call. Both workers hold
# the same student object; only the judges' routing (by the call's variant) differs.
function(add_cuda_lab)
  cmake_parse_arguments(LAB "CASES" "INTERFACE;WORKER;BENCHMARK"
                        "TESTS;HIDDEN_TESTS;TEST_LIBS;BENCHMARK_LIBS;WORKER_LIBS;HELPER_VARIANTS;WORKER_STUB_LIBS"
                        ${ARGN})
  get_filename_component(lab "${CMAKE_CURRENT_SOURCE_DIR}" NAME)
  if(LABS_ONLY AND NOT lab IN_LIST LABS_ONLY)
    return()
  endif()
  if(LAB_HELPER_VARIANTS AND (NOT LAB_WORKER_LIBS OR NOT LAB_WORKER_STUB_LIBS))
    message(FATAL_ERROR "${lab}: HELPER_VARIANTS needs WORKER_LIBS (what they are given) and "
                        "WORKER_STUB_LIBS (what the other variants' worker links instead)")
  endif()
  set(lab_dir "${CMAKE_CURRENT_SOURCE_DIR}")

  # The student's files: grading.toml is the one place they are declared, and the grader's
  # reader (grader/config.py, through cmake/lab_config.py) the one that reads it. It checks the
  # whole file: a mistake in it stops the configure with the grader's message.
  set(student_files_cmake "${CMAKE_CURRENT_BINARY_DIR}/student_files.cmake")
  execute_process(
    COMMAND "${Python3_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/cmake/lab_config.py"
            "${lab_dir}" "${student_files_cmake}"
    RESULT_VARIABLE lab_config_rc
    ERROR_VARIABLE lab_config_error)
  if(NOT lab_config_rc EQUAL 0)
    string(STRIP "${lab_config_error}" lab_config_error)
    message(FATAL_ERROR "${lab}: ${lab_config_error}")
  endif()
  include("${student_files_cmake}")   # sets LAB_STUDENT_FILES
  set(student_files ${LAB_STUDENT_FILES})
  # Edited, grading.toml configures again (its student files may have changed).
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${lab_dir}/grading.toml")

  # The judges and the binding: compiled and linked once, whatever the submission.
  set(test_sources ${LAB_TESTS})
  foreach(hidden IN LISTS LAB_HIDDEN_TESTS)
    if(EXISTS "${lab_dir}/${hidden}")
      list(APPEND test_sources ${hidden})
    endif()
  endforeach()
  if(LAB_CASES)
    # The lab's cases files, read by the grader's reader into lab_suites() (labkit/cases.hpp).
    set(cases_cpp "${CMAKE_CURRENT_BINARY_DIR}/lab_cases.cpp")
    execute_process(
      COMMAND "${Python3_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/cmake/lab_config.py" --cases
              "${lab_dir}" "${cases_cpp}"
      RESULT_VARIABLE lab_cases_rc
      ERROR_VARIABLE lab_cases_error)
    if(NOT lab_cases_rc EQUAL 0)
      string(STRIP "${lab_cases_error}" lab_cases_error)
      message(FATAL_ERROR "${lab}: ${lab_cases_error}")
    endif()
    list(APPEND test_sources "${cases_cpp}")
    foreach(cases_file tests/cases.toml hidden/cases.toml)
      if(EXISTS "${lab_dir}/${cases_file}")
        set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${lab_dir}/${cases_file}")
      endif()
    endforeach()
  endif()
  add_executable(${lab}_test ${test_sources})
  target_include_directories(${lab}_test PRIVATE "${lab_dir}")
  target_link_libraries(${lab}_test PRIVATE ${LAB_TEST_LIBS} labkit_gtest_main)
  # With the hidden tests in the build (not a student release), every correctness group of
  # grading.toml must select some test: a filter that selects none would be worth 0 silently.
  # Hidden tests as data are hidden/cases.toml.
  set(hidden_tests ${LAB_HIDDEN_TESTS})
  if(LAB_CASES)
    list(APPEND hidden_tests hidden/cases.toml)
  endif()
  set(all_hidden_here ON)
  foreach(hidden IN LISTS hidden_tests)
    if(NOT EXISTS "${lab_dir}/${hidden}")
      set(all_hidden_here OFF)
    endif()
  endforeach()
  if(hidden_tests AND all_hidden_here)
    add_test(NAME ${lab}:grading_groups_select_tests
             COMMAND "${Python3_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/cmake/check_groups.py"
                     "${lab_dir}" "$<TARGET_FILE:${lab}_test>")
    set_tests_properties(${lab}:grading_groups_select_tests PROPERTIES TIMEOUT 60 LABELS "${lab}")
  endif()

  add_executable(${lab}_bench ${LAB_BENCHMARK})
  target_include_directories(${lab}_bench PRIVATE "${lab_dir}")
  target_link_libraries(${lab}_bench PRIVATE ${LAB_BENCHMARK_LIBS} labkit_bench)
  # Every performance entry names a benchmark the program has (no GPU: it lists its specs).
  add_test(NAME ${lab}:performance_entries_name_benchmarks
           COMMAND "${Python3_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/cmake/check_benchmarks.py"
                   "${lab_dir}" "$<TARGET_FILE:${lab}_bench>")
  set_tests_properties(${lab}:performance_entries_name_benchmarks PROPERTIES TIMEOUT 300
                       LABELS "${lab}")

  add_library(${lab}_binding OBJECT ${LAB_WORKER})
  target_include_directories(${lab}_binding PRIVATE "${lab_dir}")
  target_link_libraries(${lab}_binding PRIVATE labkit_worker)  # its headers: objects only

  set(variants "${lab}|${LABS_SUBMISSION_DIR}/${lab}|${LABS_TEST_SUBMISSION}|submission")
  if(LABS_WITH_SOLUTIONS)
    if(EXISTS "${PROJECT_SOURCE_DIR}/solutions/${lab}")
      list(APPEND variants "${lab}_solution|${PROJECT_SOURCE_DIR}/solutions/${lab}|ON|solution")
    else()
      message(STATUS "${lab}: no solutions/${lab}/ (a student release): its solution is not built")
    endif()
  endif()
  foreach(variant IN LISTS variants)
    string(REPLACE "|" ";" parts "${variant}")
    list(GET parts 0 prefix)
    list(GET parts 1 source_dir)
    list(GET parts 2 register_tests)
    list(GET parts 3 kind)

    set(student_sources "")
    foreach(file IN LISTS student_files)
      if(NOT EXISTS "${source_dir}/${file}")
        message(FATAL_ERROR "${lab}: ${source_dir}/${file} does not exist")
      endif()
      list(APPEND student_sources "${source_dir}/${file}")
    endforeach()
    add_library(${prefix}_student OBJECT ${student_sources})
    target_include_directories(${prefix}_student PRIVATE "${lab_dir}")
    target_link_libraries(${prefix}_student PRIVATE CUDA::cudart_static)  # headers only
    target_compile_options(${prefix}_student PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)
    if(LABS_SANDBOX_BUILD)
      _lab_build_sandbox(${prefix}_student "${lab_dir}" "${student_sources}")
    endif()

    # WORKER_LIBS: functions the lab provides to the student (lab 07's conv_sgemm); the
    # policy names the ones the student may call. With HELPER_VARIANTS, only their worker has
    # them; <prefix>_worker, which runs every other variant, links the stubs.
    set(worker_routes "")
    if(LAB_HELPER_VARIANTS)
      _add_lab_worker(${prefix}_worker ${lab} ${prefix} ${LAB_WORKER_STUB_LIBS})
      _add_lab_worker(${prefix}_helper_worker ${lab} ${prefix} ${LAB_WORKER_LIBS})
      foreach(helped IN LISTS LAB_HELPER_VARIANTS)
        list(APPEND worker_routes
             "--labkit-worker-for=${helped}=${CMAKE_CURRENT_BINARY_DIR}/${prefix}_helper_worker")
      endforeach()
    else()
      _add_lab_worker(${prefix}_worker ${lab} ${prefix} ${LAB_WORKER_LIBS})
    endif()

    set(worker_path "${CMAKE_CURRENT_BINARY_DIR}/${prefix}_worker")
    if(register_tests)
      # One label (the student preset selects "submission"): CMake 3.25 splits a list-valued
      # property given here into separate properties.
      # The race checks need compute-sanitizer (found by common/CMakeLists.txt); without it
      # they show as skipped, saying so. No memcheck re-runs of failing calls here: CTest runs
      # each test in its own judge, so every failing test would pay for one (the grader has them).
      set(test_args --labkit-worker=${worker_path} ${worker_routes})
      if(LABKIT_COMPUTE_SANITIZER)
        list(APPEND test_args --labkit-sanitizer=${LABKIT_COMPUTE_SANITIZER} --labkit-memcheck=0)
      endif()
      gtest_discover_tests(${lab}_test TEST_PREFIX "${prefix}:" DISCOVERY_TIMEOUT 60 NO_PRETTY_VALUES
                           EXTRA_ARGS ${test_args}
                           PROPERTIES TIMEOUT 300 LABELS ${kind})
      # A short benchmark run: checks every timed output against the baseline; skips without GPU.
      add_test(NAME ${prefix}:benchmark_smoke
               COMMAND ${lab}_bench --smoke --labkit-worker=${worker_path} ${worker_routes})
      set_tests_properties(${prefix}:benchmark_smoke PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300 RESOURCE_LOCK gpu
                           LABELS "gpu;${lab};${kind}")
    endif()

    if(kind STREQUAL "submission")
      set(interface "")
      if(LAB_INTERFACE)
        set(interface "\"${lab_dir}/${LAB_INTERFACE}\"")
      endif()
      list(JOIN student_sources "\", \"" sources_json)
      # The helper's worker and the variants routed to it (null: one worker runs them all).
      set(helper "null")
      if(LAB_HELPER_VARIANTS)
        list(JOIN LAB_HELPER_VARIANTS "\", \"" helped_json)
        set(helper "{\"target\": \"${prefix}_helper_worker\", \"path\": \"$<TARGET_FILE:${prefix}_helper_worker>\", \"variants\": [\"${helped_json}\"]}")
      endif()
      get_property(sandbox GLOBAL PROPERTY LABS_SANDBOX_PREFIX_${prefix}_student)
      if(NOT sandbox)
        set(sandbox "null")
      endif()
      string(CONCAT entry
        "    \"${lab}\": {\n"
        "      \"student_target\": \"${prefix}_student\",\n"
        "      \"student_sources\": [\"${sources_json}\"],\n"
        "      \"student_objects\": [\"$<JOIN:$<TARGET_OBJECTS:${prefix}_student>,\", \">\"],\n"
        "      \"interface_headers\": [${interface}],\n"
        "      \"build_sandbox\": ${sandbox},\n"
        "      \"worker\": {\"target\": \"${prefix}_worker\", \"path\": \"$<TARGET_FILE:${prefix}_worker>\"},\n"
        "      \"helper_worker\": ${helper},\n"
        "      \"test\": {\"target\": \"${lab}_test\", \"path\": \"$<TARGET_FILE:${lab}_test>\"},\n"
        "      \"bench\": {\"target\": \"${lab}_bench\", \"path\": \"$<TARGET_FILE:${lab}_bench>\"}\n"
        "    }")
      set_property(GLOBAL APPEND PROPERTY LABS_MANIFEST_ENTRIES "${entry}")
    endif()
  endforeach()
endfunction()

# The student's compile through the build sandbox (grader/buildbox.py, LABS_SANDBOX_BUILD): the
# compiler and all it starts read only the toolchain, the system, the student's own files, the
# lab's headers and the harness's include folders, and write only a private folder; the
# repository and the build tree are cut out of everything else it may read. The same command
# prefix is written to the manifest ("build_sandbox"): the policy's preprocessor runs on the
# student's file go through it too.
function(_lab_build_sandbox target lab_dir sources)
  file(GLOB lab_headers LIST_DIRECTORIES false "${lab_dir}/*.h" "${lab_dir}/*.hpp"
       "${lab_dir}/*.cuh")
  set(box "${Python3_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/grader/buildbox.py")
  foreach(path IN LISTS sources lab_headers)
    list(APPEND box --read "${path}")
  endforeach()
  list(APPEND box --read "${PROJECT_SOURCE_DIR}/common/include"
                  --deny "${PROJECT_SOURCE_DIR}" --deny "${CMAKE_BINARY_DIR}"
                  --deny "${LABS_SUBMISSION_DIR}" --)
  # CUDA compiles also keep nvcc's fatbin beside the object (<object>.fatbin): the policy
  # checks that the object's .nv_fatbin section is that fatbin, byte for byte.
  set(cuda_box ${box})
  list(INSERT cuda_box 2 --keep-fatbin)
  set_target_properties(${target} PROPERTIES CUDA_COMPILER_LAUNCHER "${cuda_box}"
                                             CXX_COMPILER_LAUNCHER "${box}"
                                             C_COMPILER_LAUNCHER "${box}")
  list(JOIN box "\", \"" box_json)
  set_property(GLOBAL PROPERTY LABS_SANDBOX_PREFIX_${target} "[\"${box_json}\"]")
endfunction()

# One worker of a lab: the runner's objects, the binding, the student's objects, then `libs`.
function(_add_lab_worker name lab prefix)
  # Link order is part of the defence: the runner's objects come first, so the student's
  # object cannot replace a weak symbol the runner uses; any duplicate strong symbol is a
  # link error. Static cudart: the student cannot interpose the runtime.
  # The worker is the PLANNER (common/src/planner.cpp): no CUDA library is linked at all, the
  # recording runtime stands in for libcudart, and a runtime function it does not define is a
  # link error. The executor (labkit_executor) runs what it plans.
  add_executable(${name} $<TARGET_OBJECTS:labkit_planner> $<TARGET_OBJECTS:${lab}_binding>
                         $<TARGET_OBJECTS:${prefix}_student>)
  target_link_libraries(${name} PRIVATE ${ARGN})
  set_target_properties(${name} PROPERTIES LINKER_LANGUAGE CXX CUDA_RUNTIME_LIBRARY None)
  add_dependencies(${lab}_test ${name} labkit_executor)
  add_dependencies(${lab}_bench ${name} labkit_executor)
endfunction()

# Writes <build>/labs-manifest.json: where the grader finds every binary and object.
function(write_labs_manifest)
  get_property(entries GLOBAL PROPERTY LABS_MANIFEST_ENTRIES)
  set(labs "")
  set(sep "")
  foreach(entry IN LISTS entries)
    string(APPEND labs "${sep}${entry}")
    set(sep ",\n")
  endforeach()
  file(GENERATE OUTPUT "${CMAKE_BINARY_DIR}/labs-manifest.json" CONTENT
"{
  \"version\": 1,
  \"gpu_info\": \"$<TARGET_FILE:labkit_gpu_info>\",
  \"compile_commands\": \"${CMAKE_BINARY_DIR}/compile_commands.json\",
  \"labs\": {
${labs}
  }
}
")
endfunction()
