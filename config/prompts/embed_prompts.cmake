# schedmate_embed_prompts(<target> <namespace> <Function>=<file> ...): compiles prompt templates
# kept as data files in config/prompts/ into <target> as `std::string_view <namespace>::<Function>()`.
# The text is embedded verbatim as a raw string literal at configure time; editing a prompt file
# re-runs CMake (CMAKE_CONFIGURE_DEPENDS). Prompt files must not contain the delimiter )sm_prompt".
function(schedmate_embed_prompts target namespace)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${target}_prompts.cc)
  set(text "// Generated from config/prompts/*.txt by config/prompts/embed_prompts.cmake.\n")
  string(APPEND text "#include <string_view>\nnamespace ${namespace} {\n")
  foreach(pair ${ARGN})
    string(REPLACE "=" ";" parts "${pair}")
    list(GET parts 0 fn)
    list(GET parts 1 file)
    schedmate_raw_string(literal ${PROJECT_SOURCE_DIR}/config/prompts/${file} sm_prompt)
    string(APPEND text "std::string_view ${fn}() {\n  return ${literal};\n}\n")
  endforeach()
  string(APPEND text "}  // namespace ${namespace}\n")
  schedmate_add_generated_source(${target} ${out} "${text}")
endfunction()
