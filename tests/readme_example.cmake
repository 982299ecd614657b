# SPDX-License-Identifier: MIT
# ctest readme_example: the first ```c block of README.md is a complete program;
# compile it against the just-built static library, strictly, and run it.
#
#   cmake -DPA_TEST_CONFIG=<build>/pa-test-config-<config>.cmake -P readme_example.cmake
include("${PA_TEST_CONFIG}")

set(readme "${PA_SOURCE_DIR}/README.md")
file(READ "${readme}" text)

# The block opens with a line that is exactly ```c and closes with the next ```.
string(PREPEND text "\n")
string(FIND "${text}" "\n```c\n" start)
if(start LESS 0)
	message(FATAL_ERROR "${readme}: no ```c block")
endif()
math(EXPR start "${start} + 6")
string(SUBSTRING "${text}" ${start} -1 rest)
string(FIND "${rest}" "\n```" end)
if(end LESS 0)
	message(FATAL_ERROR "${readme}: the ```c block is not closed")
endif()
math(EXPR end "${end} + 1")
string(SUBSTRING "${rest}" 0 ${end} code)

set(work "${PA_BINARY_DIR}/readme_example")
file(MAKE_DIRECTORY "${work}")
file(WRITE "${work}/example.c" "${code}")

# Strict C11 and the project's warnings: the example is what users copy.
execute_process(
	COMMAND "${PA_CC}" ${PA_CFLAGS} -std=c11 -Wall -Wextra -Wpedantic -Werror
	        "-I${PA_INCLUDE_DIR}" "${work}/example.c" "${PA_STATIC_LIB}" -pthread
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
