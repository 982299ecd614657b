# SPDX-License-Identifier: MIT
# ctest headers_alone: every header of the core (src/, src/stats/ and
# src/platform/platform.h) compiles on its own, hosted and freestanding, so
# that a file may include any of them first. Each is included by a one-line
# file that names it by its full path: what it includes is found beside it,
# never through an include path of src/.
#
#   cmake -DPA_TEST_CONFIG=<build>/pa-test-config-<config>.cmake -P headers_alone.cmake
include("${PA_TEST_CONFIG}")

file(GLOB headers "${PA_SOURCE_DIR}/src/*.h" "${PA_SOURCE_DIR}/src/stats/*.h")
list(APPEND headers "${PA_SOURCE_DIR}/src/platform/platform.h")
list(LENGTH headers n)
if(n LESS 10)
	message(FATAL_ERROR "only ${n} headers under ${PA_SOURCE_DIR}/src")
endif()

set(pa_includes "")
foreach(dir IN LISTS PA_INCLUDE_DIRS)
	list(APPEND pa_includes "-I${dir}")
endforeach()

set(work "${PA_BINARY_DIR}/headers_alone")
file(MAKE_DIRECTORY "${work}")
set(bad "")
foreach(h IN LISTS headers)
	file(RELATIVE_PATH rel "${PA_SOURCE_DIR}/src" "${h}")
	string(MAKE_C_IDENTIFIER "${rel}" stem)
	set(unit "${work}/${stem}.c")
	file(WRITE "${unit}" "#include \"${h}\"\n")
	foreach(mode hosted freestanding)
		set(extra "")
		if(mode STREQUAL "freestanding")
			set(extra -ffreestanding -DPA_FREESTANDING=1)
		endif()
		execute_process(
			COMMAND "${PA_CC}" -std=gnu11 -fsyntax-only -Wall -Wextra -Wmissing-prototypes
			        -Wvla -Wshadow -Werror ${extra} ${pa_includes} "${unit}"
			RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
		if(NOT rc EQUAL 0)
			string(APPEND bad "  ${rel} (${mode}):\n${out}\n")
		endif()
	endforeach()
endforeach()
if(bad)
	message(FATAL_ERROR "headers that do not compile on their own:\n${bad}")
endif()
message(STATUS "${n} headers compile on their own, hosted and freestanding")
