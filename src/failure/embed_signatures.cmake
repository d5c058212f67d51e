# Writes ${OUT}: a C++ file returning the text of ${IN} (config/failure_signatures.yaml), so the
# default knowledge base is part of the binary and the YAML file stays its single source.
file(READ "${IN}" content)
string(FIND "${content}" ")sm_yaml\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw-string delimiter )sm_yaml\"")
endif()
file(WRITE "${OUT}.tmp"
  "// Generated from config/failure_signatures.yaml by src/failure/embed_signatures.cmake.\n"
  "#include \"failure/signature_set.h\"\n"
  "namespace schedmate::failure {\n"
  "std::string_view BuiltinSignatureYaml() {\n"
  "  static constexpr char kYaml[] = R\"sm_yaml(${content})sm_yaml\";\n"
  "  return {kYaml, sizeof(kYaml) - 1};\n"
  "}\n"
  "}  // namespace schedmate::failure\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
