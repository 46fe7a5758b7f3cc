# Cases for the operator versions of opsets above onnx 1.12's 17 (tests/conformance/generate_opset_tests.py),
# generated into the test data cache (${EPHOST_TEST_DATA_CACHE}, tests/hermetic.cmake), and run with `ephost test`; the
# cases that do not pass must be those in tests/conformance/opset_expected_failures.txt. Included from
# tests/CMakeLists.txt.
add_test(NAME onnx_opset_conformance COMMAND ${EPHOST_ONNX_PYTHON}
  ${CMAKE_CURRENT_LIST_DIR}/run_opset_tests.py --ephost $<TARGET_FILE:ephost_cli>
  --cache-dir ${EPHOST_TEST_DATA_CACHE})
set_tests_properties(onnx_opset_conformance PROPERTIES TIMEOUT 600)
