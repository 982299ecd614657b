# SPDX-License-Identifier: MIT
# Helpers of the script tests (tests/*.cmake, run with cmake -P):
#   pa_readme_example(README OUT)  write the first ```c block of README (a complete
#                                  program) to the file OUT
#   pa_readme_example_after(README HEADING OUT)  the same for the first ```c block after
#                                  the line HEADING
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

function(pa_readme_example_after readme heading out)
	file(READ "${readme}" text)
	string(FIND "${text}" "\n${heading}\n" at)
	if(at LESS 0)
		message(FATAL_ERROR "${readme}: no line ${heading}")
	endif()
	string(SUBSTRING "${text}" ${at} -1 rest)
	file(WRITE "${out}.md" "${rest}")
	pa_readme_example("${out}.md" "${out}")
endfunction()

function(run what)
	execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
	if(NOT rc EQUAL 0)
		message(FATAL_ERROR "${what} failed (${rc}): ${ARGN}")
	endif()
endfunction()
