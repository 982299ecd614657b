# SPDX-License-Identifier: MIT
# ctest readme_device_example: the ```c block of README.md's device section is a complete program;
# compile it against the just-built static library, strictly, and run it.
#
#   cmake -DPA_TEST_CONFIG=<build>/pa-test-config-<config>.cmake -P readme_device_example.cmake
include("${PA_TEST_CONFIG}")

include("${CMAKE_CURRENT_LIST_DIR}/script_helpers.cmake")

set(work "${PA_BINARY_DIR}/readme_device_example")
file(MAKE_DIRECTORY "${work}")
pa_readme_example_after("${PA_SOURCE_DIR}/README.md" "## Device and hypervisor memory" "${work}/example.c")

set(pa_includes "")
foreach(dir IN LISTS PA_INCLUDE_DIRS)
	list(APPEND pa_includes "-I${dir}")
endforeach()

# Strict C11 and the project's warnings: the example is what users copy.
execute_process(
	COMMAND "${PA_CC}" ${PA_CFLAGS} -std=c11 -Wall -Wextra -Wpedantic -Werror
	        ${pa_includes} "${work}/example.c" "${PA_STATIC_LIB}" -pthread
	        -o "${work}/example"
	RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
	message(FATAL_ERROR "the README example (${work}/example.c) does not compile")
endif()

execute_process(COMMAND "${work}/example" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
	message(FATAL_ERROR "the README example exited with ${rc}")
endif()
message(STATUS "the README example compiled and ran")
