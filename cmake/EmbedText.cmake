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

# schedmate_embed_data_file(<target> <file under config/> <namespace> <function>): compiles
# config/<file> into <target> as `std::string_view <namespace>::<function>()` returning the file
# verbatim, so the data file stays the single source of what it holds (the function is declared in
# the header of the type that parses it). The file must not contain the raw-string delimiter )sm_data".
function(schedmate_embed_data_file target file namespace function)
  schedmate_raw_string(literal ${PROJECT_SOURCE_DIR}/config/${file} sm_data)
  string(MAKE_C_IDENTIFIER "${file}" stem)
  set(text "// Generated from config/${file} by schedmate_embed_data_file (cmake/EmbedText.cmake).\n")
  string(APPEND text "#include <string_view>\nnamespace ${namespace} {\n")
  string(APPEND text "std::string_view ${function}();\n")
  string(APPEND text "std::string_view ${function}() {\n")
  string(APPEND text "  static constexpr char kText[] = ${literal};\n")
  string(APPEND text "  return {kText, sizeof(kText) - 1};\n}\n}  // namespace ${namespace}\n")
  schedmate_add_generated_source(${target} ${CMAKE_CURRENT_BINARY_DIR}/${target}_${stem}.cc
                                 "${text}")
endfunction()
