# schedmate_embed_extractor_knowledge(<target>): compiles config/extractor_knowledge.yaml into
# <target> as std::string_view schedmate::advisor::internal::BuiltinExtractorKnowledgeYaml(), so
# the data file stays the single source of what it holds. The file must not contain the
# raw-string delimiter )sm_knowledge".
function(schedmate_embed_extractor_knowledge target)
  set(path ${PROJECT_SOURCE_DIR}/config/extractor_knowledge.yaml)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${target}_extractor_knowledge.cc)
  schedmate_raw_string(literal ${path} sm_knowledge)
  set(text "// Generated from config/extractor_knowledge.yaml by src/advisor/embed_knowledge.cmake.\n")
  string(APPEND text "#include \"advisor/extractor_knowledge.h\"\n")
  string(APPEND text "namespace schedmate::advisor::internal {\n")
  string(APPEND text "std::string_view BuiltinExtractorKnowledgeYaml() {\n")
  string(APPEND text "  static constexpr char kText[] = ${literal};\n")
  string(APPEND text "  return {kText, sizeof(kText) - 1};\n}\n")
  string(APPEND text "}  // namespace schedmate::advisor::internal\n")
  schedmate_add_generated_source(${target} ${out} "${text}")
endfunction()
