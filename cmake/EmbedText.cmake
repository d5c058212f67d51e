# Helpers for compiling data files (prompts, exemplars, dashboard assets) into the binary as raw
# string literals at configure time; editing such a file re-runs CMake.

# schedmate_raw_string(<out_var> <path> <tag>): sets <out_var> to the C++ literal R"tag(...)tag"
# holding the file verbatim, and makes CMake re-run when the file changes. A file containing the
# delimiter )tag" is a configure error.
function(schedmate_raw_string out_var path tag)
  file(READ ${path} body)
  string(FIND "${body}" ")${tag}\"" bad)
  if(NOT bad EQUAL -1)
    message(FATAL_ERROR "${path} contains the raw-string delimiter )${tag}\"")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${path})
  set(${out_var} "R\"${tag}(${body})${tag}\"" PARENT_SCOPE)
endfunction()

# schedmate_add_generated_source(<target> <file> <text>): writes <text> to <file> (touching it
# only when it changed, so builds stay incremental) and compiles it into <target>.
function(schedmate_add_generated_source target file text)
  file(WRITE ${file}.tmp "${text}")
  configure_file(${file}.tmp ${file} COPYONLY)
  target_sources(${target} PRIVATE ${file})
endfunction()
