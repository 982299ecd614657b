# SPDX-License-Identifier: MIT
# The core includes no OS or C library header: every file of src/ and
# src/stats/, and the platform layer the core sees (src/platform/platform.c
# and .h; not the hooks' defaults beside them, the one place the OS lives),
# includes only our own headers and the freestanding ones. Run as
# cmake -DPA_SOURCE_DIR=... -P.
cmake_minimum_required(VERSION 3.14)
set(allowed stddef.h stdint.h stdbool.h stdatomic.h limits.h stdarg.h)
file(GLOB core_files "${PA_SOURCE_DIR}/src/*.c" "${PA_SOURCE_DIR}/src/*.h"
     "${PA_SOURCE_DIR}/src/stats/*.c" "${PA_SOURCE_DIR}/src/stats/*.h"
     "${PA_SOURCE_DIR}/src/platform/platform.c" "${PA_SOURCE_DIR}/src/platform/platform.h")
if(NOT core_files)
	message(FATAL_ERROR "no core files under ${PA_SOURCE_DIR}/src")
endif()
set(bad "")
foreach(f IN LISTS core_files)
	file(STRINGS "${f}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*<")
	foreach(line IN LISTS lines)
		string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*<([^>]*)>.*" "\\1" header "${line}")
		if(NOT header IN_LIST allowed)
			file(RELATIVE_PATH rel "${PA_SOURCE_DIR}" "${f}")
			string(APPEND bad "  ${rel}: <${header}>\n")
		endif()
	endforeach()
endforeach()
if(bad)
	message(FATAL_ERROR "the core includes headers beyond the freestanding ones "
	        "(${allowed}); the OS belongs in src/platform/:\n${bad}")
endif()
list(LENGTH core_files n)
message(STATUS "${n} core files include only freestanding headers")
