# SPDX-License-Identifier: MIT
# Helpers of the script tests (tests/*.cmake, run with cmake -P):
#   pa_readme_example(README OUT)  write the first ```c block of README (a complete
#                                  program) to the file OUT
#   run(WHAT COMMAND...)           run a command; fail the test, naming WHAT, if it fails

function(pa_readme_example readme out)
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
	file(WRITE "${out}" "${code}")
endfunction()

function(run what)
	execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
	if(NOT rc EQUAL 0)
		message(FATAL_ERROR "${what} failed (${rc}): ${ARGN}")
	endif()
endfunction()
