# Writes schedmate.1.gz from the binary's own --help with help2man: the top-level help, then one
# "schedmate GROUP [SUB] --help" block per subcommand (two levels), then schedmate.h2m.
# Usage: cmake -DSCHEDMATE=<binary> -DSTATIC_INCLUDE=<schedmate.h2m> -DOUT=<dir> -P GenerateManPage.cmake
# Run at install time (cpack, cmake --install), so the default build does not need help2man.
cmake_minimum_required(VERSION 3.22)
foreach(var SCHEDMATE STATIC_INCLUDE OUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "GenerateManPage.cmake: -D${var}=... is required")
  endif()
endforeach()
find_program(HELP2MAN help2man)
find_program(GZIP gzip)
if(NOT HELP2MAN OR NOT GZIP)
  message(FATAL_ERROR "the man page needs help2man and gzip: run scripts/install-deps.sh --package")
endif()

# The subcommand names listed under "Subcommands:" in `help_text` (two-space indent).
function(list_subcommands help_text out_var)
  set(names "")
  string(FIND "${help_text}" "\nSubcommands:\n" at)
  if(at GREATER_EQUAL 0)
    string(SUBSTRING "${help_text}" ${at} -1 tail)
    string(REPLACE "\n" ";" lines "${tail}")
    foreach(line IN LISTS lines)
      if(line MATCHES "^  ([a-z][a-z0-9-]*)( |$)")
        list(APPEND names ${CMAKE_MATCH_1})
      endif()
    endforeach()
  endif()
  set(${out_var} ${names} PARENT_SCOPE)
endfunction()

# `schedmate ARGS... --help`, or a fatal error naming the command.
function(help_of out_var)
  execute_process(COMMAND ${SCHEDMATE} ${ARGN} --help OUTPUT_VARIABLE text ERROR_VARIABLE err
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "schedmate ${cmd} --help failed (${rc}): ${err}")
  endif()
  set(${out_var} "${text}" PARENT_SCOPE)
endfunction()

# Help text as a no-fill roff block: backslashes escaped, control characters at a line start
# neutralised.
function(append_block out_var title text)
  string(REPLACE "\\" "\\e" text "${text}")
  string(REGEX REPLACE "\n([.'])" "\n\\\\&\\1" text "\n${text}")
  set(${out_var} "${${out_var}}.SS \"${title}\"\n.nf${text}\n.fi\n" PARENT_SCOPE)
endfunction()

help_of(top)
list_subcommands("${top}" groups)
if(NOT groups)
  message(FATAL_ERROR "no subcommands found in `${SCHEDMATE} --help`")
endif()
set(include_text "[SUBCOMMANDS]\nEach subcommand's own --help, as the installed binary prints it.\n")
foreach(group IN LISTS groups)
  help_of(text ${group})
  append_block(include_text "schedmate ${group}" "${text}")
  list_subcommands("${text}" subs)
  foreach(sub IN LISTS subs)
    help_of(sub_text ${group} ${sub})
    append_block(include_text "schedmate ${group} ${sub}" "${sub_text}")
  endforeach()
endforeach()

file(MAKE_DIRECTORY "${OUT}")
file(WRITE "${OUT}/subcommands.h2m" "${include_text}")
execute_process(
  COMMAND ${HELP2MAN} --no-info --section 1
          --name "semantic-aware scheduling companion for GPU clusters"
          --include "${OUT}/subcommands.h2m" --include "${STATIC_INCLUDE}"
          --output "${OUT}/schedmate.1" ${SCHEDMATE}
  RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "help2man failed (${rc}): ${err}")
endif()
execute_process(COMMAND ${GZIP} -9nf "${OUT}/schedmate.1" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gzip ${OUT}/schedmate.1 failed (${rc})")
endif()
