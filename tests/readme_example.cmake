# SPDX-License-Identifier: MIT
# ctest readme_example: the first ```c block of README.md is a complete program;
# compile it against the just-built static library, strictly, and run it. With
# -DPA_README_SECTION="## Heading" (ctest readme_device_example) the first block
# after that heading, built in a folder named by -DPA_README_NAME.
#
#   cmake -DPA_TEST_CONFIG=<build>/pa-test-config-<config>.cmake \
#         [-DPA_README_SECTION=... -DPA_README_NAME=...] -P readme_example.cmake
include("${PA_TEST_CONFIG}")

include("${CMAKE_CURRENT_LIST_DIR}/script_helpers.cmake")

if(NOT PA_README_NAME)
	set(PA_README_NAME readme_example)
endif()
set(work "${PA_BINARY_DIR}/${PA_README_NAME}")
file(MAKE_DIRECTORY "${work}")
if(PA_README_SECTION)
	pa_readme_example_after("${PA_SOURCE_DIR}/README.md" "${PA_README_SECTION}" "${work}/example.c")
else()
	pa_readme_example("${PA_SOURCE_DIR}/README.md" "${work}/example.c")
endif()

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
