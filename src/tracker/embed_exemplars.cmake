# schedmate_embed_tracker_exemplars(<target>): compiles config/tracker_exemplars.txt into <target>
# as `std::string_view schedmate::tracker::BuiltinExemplarText()`, so the data file stays the
# single source of the embeddings filter's exemplars. Embedded verbatim at configure time; editing
# the file re-runs CMake (CMAKE_CONFIGURE_DEPENDS). The file must not contain )sm_exemplars".
function(schedmate_embed_tracker_exemplars target)
  set(path ${PROJECT_SOURCE_DIR}/config/tracker_exemplars.txt)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${target}_exemplars.cc)
  schedmate_raw_string(literal ${path} sm_exemplars)
  set(text "// Generated from config/tracker_exemplars.txt by src/tracker/embed_exemplars.cmake.\n")
  string(APPEND text "#include \"tracker/embedding_filter.h\"\nnamespace schedmate::tracker {\n")
  string(APPEND text "std::string_view BuiltinExemplarText() {\n")
  string(APPEND text "  static constexpr char kText[] = ${literal};\n")
  string(APPEND text "  return {kText, sizeof(kText) - 1};\n}\n}  // namespace schedmate::tracker\n")
  schedmate_add_generated_source(${target} ${out} "${text}")
endfunction()
