# SPDX-License-Identifier: MIT
# ctest vendor_parent: a parent project vendors pagealloc with add_subdirectory()
# and builds with -O3 -DNDEBUG, as a release build of someone else's project
# does. Our sources must build warning-free there (PA_WERROR=ON is forced to
# prove it), the parent must get none of our tests, program or generated
# files in its own binary dir, and the README's example, linked to
# pagealloc::pagealloc_static, must run.
#
#   cmake -DPA_TEST_CONFIG=<build>/pa-test-config-<config>.cmake -P vendor_parent.cmake
include("${PA_TEST_CONFIG}")
include("${CMAKE_CURRENT_LIST_DIR}/script_helpers.cmake")

set(work "${PA_BINARY_DIR}/vendor_parent")
file(REMOVE_RECURSE "${work}")
file(MAKE_DIRECTORY "${work}/src")
pa_readme_example("${PA_SOURCE_DIR}/README.md" "${work}/src/example.c")
file(WRITE "${work}/src/CMakeLists.txt" "\
cmake_minimum_required(VERSION 3.14)
project(parent C)
add_subdirectory([[${PA_SOURCE_DIR}]] third_party/pagealloc)
add_executable(example example.c)
target_link_libraries(example PRIVATE pagealloc::pagealloc_static)
")

set(build "${work}/build")
run("parent configure" "${CMAKE_COMMAND}" -S "${work}/src" -B "${build}" -G "${PA_GENERATOR}"
    "-DCMAKE_C_COMPILER=${PA_CC}" -DCMAKE_BUILD_TYPE=Release
    "-DCMAKE_C_FLAGS_RELEASE=-O3 -DNDEBUG" -DPA_WERROR=ON)
run("parent build" "${CMAKE_COMMAND}" --build "${build}" --config Release --parallel 2)

# What the parent's tree must not hold: our tests, our program, our
# generated files at its top.
set(sub "${build}/third_party/pagealloc")
if(EXISTS "${sub}/tests" OR EXISTS "${sub}/pagealloc" OR EXISTS "${build}/pagealloc")
	message(FATAL_ERROR "the parent's build got our tests or our program")
endif()
foreach(f pagealloc.pc pagealloc-config.cmake pagealloc_version.h pa-test-config-Release.cmake)
	if(EXISTS "${build}/${f}")
		message(FATAL_ERROR "${f} was written to the parent's binary dir")
	endif()
endforeach()
if(NOT EXISTS "${sub}/include/pagealloc_version.h")
	message(FATAL_ERROR "no pagealloc_version.h under our own binary dir ${sub}")
endif()
execute_process(COMMAND "${CMAKE_CTEST_COMMAND}" -N WORKING_DIRECTORY "${build}"
	OUTPUT_VARIABLE listed)
if(NOT listed MATCHES "Total Tests: 0")
	message(FATAL_ERROR "the parent's ctest lists our tests:\n${listed}")
endif()

file(GLOB_RECURSE example "${build}/example")
if(NOT example)
	message(FATAL_ERROR "the parent built no example")
endif()
run("the README example in the parent" ${example})
message(STATUS "vendored with add_subdirectory at -O3 -DNDEBUG: built and ran")
