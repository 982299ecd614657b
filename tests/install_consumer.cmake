# SPDX-License-Identifier: MIT
# ctest install_consumer: install the build into a temporary prefix, then build
# tests/consumer against it twice -- with find_package(pagealloc) (shared and
# static targets) and with pkg-config -- and run every binary.
#
#   cmake -DPA_TEST_CONFIG=<build>/pa-test-config-<config>.cmake -P install_consumer.cmake
include("${PA_TEST_CONFIG}")
include("${CMAKE_CURRENT_LIST_DIR}/script_helpers.cmake")

set(work "${PA_BINARY_DIR}/install_consumer")
set(prefix "${work}/prefix")
set(consumer "${PA_SOURCE_DIR}/tests/consumer")
file(REMOVE_RECURSE "${work}")
file(MAKE_DIRECTORY "${work}")

# cmake_install.cmake rather than `cmake --install` (3.15): the minimum is 3.14.
run("install" "${CMAKE_COMMAND}" "-DCMAKE_INSTALL_PREFIX=${prefix}"
    "-DCMAKE_INSTALL_CONFIG_NAME=${PA_CONFIG}" -P "${PA_BINARY_DIR}/cmake_install.cmake")
foreach(f include/pagealloc.h include/pagealloc_version.h ${PA_INSTALL_LIBDIR}/libpagealloc.a
          ${PA_INSTALL_LIBDIR}/pkgconfig/pagealloc.pc
          ${PA_INSTALL_LIBDIR}/cmake/pagealloc/pagealloc-config.cmake
          ${PA_INSTALL_LIBDIR}/cmake/pagealloc/pagealloc-config-version.cmake)
	if(NOT EXISTS "${prefix}/${f}")
		message(FATAL_ERROR "install did not create ${f}")
	endif()
endforeach()
file(GLOB sonames "${prefix}/${PA_INSTALL_LIBDIR}/libpagealloc.so.[0-9]*")
if(NOT sonames)
	message(FATAL_ERROR "install did not create a versioned libpagealloc.so")
endif()

# 1. find_package(pagealloc), as a CMake user does.
run("consumer configure" "${CMAKE_COMMAND}" -S "${consumer}" -B "${work}/cmake-build"
    -G "${PA_GENERATOR}" "-DCMAKE_C_COMPILER=${PA_CC}" "-DCMAKE_PREFIX_PATH=${prefix}"
    -DCMAKE_BUILD_TYPE=Release)
run("consumer build" "${CMAKE_COMMAND}" --build "${work}/cmake-build" --config Release)
file(GLOB_RECURSE shared_bin "${work}/cmake-build/consumer")
file(GLOB_RECURSE static_bin "${work}/cmake-build/consumer_static")
if(NOT shared_bin OR NOT static_bin)
	message(FATAL_ERROR "the consumer build made no binaries")
endif()
run("consumer (find_package, shared)" ${shared_bin})
run("consumer (find_package, static)" ${static_bin})

# 2. pkg-config, as a Makefile user does.
if(NOT PA_PKG_CONFIG)
	message(FATAL_ERROR "pkg-config is not installed")
endif()
set(ENV{PKG_CONFIG_PATH} "${prefix}/${PA_INSTALL_LIBDIR}/pkgconfig")
execute_process(COMMAND "${PA_PKG_CONFIG}" --cflags --libs pagealloc
	OUTPUT_VARIABLE pc_flags OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
	message(FATAL_ERROR "pkg-config --cflags --libs pagealloc failed")
endif()
message(STATUS "pkg-config --cflags --libs pagealloc: ${pc_flags}")
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
run("consumer compile (pkg-config)" "${PA_CC}" -std=c11 -Wall -Wextra -Werror
    "${consumer}/main.c" ${pc_flags} -o "${work}/consumer-pc")
set(ENV{LD_LIBRARY_PATH} "${prefix}/${PA_INSTALL_LIBDIR}")
run("consumer (pkg-config)" "${work}/consumer-pc")
message(STATUS "installed pagealloc works with find_package and pkg-config")
