# schedmate_embed_tracker_formats(<target>): compiles config/tracker_formats.yaml into <target> as
# `std::string_view schedmate::tracker::BuiltinFormatsYaml()`, so the data file stays the single
# source of the tracker's positional line formats. The file must not contain )sm_formats".
function(schedmate_embed_tracker_formats target)
  set(path ${PROJECT_SOURCE_DIR}/config/tracker_formats.yaml)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${target}_formats.cc)
  schedmate_raw_string(literal ${path} sm_formats)
  set(text "// Generated from config/tracker_formats.yaml by src/tracker/embed_formats.cmake.\n")
  string(APPEND text "#include \"tracker/line_formats.h\"\nnamespace schedmate::tracker {\n")
  string(APPEND text "std::string_view BuiltinFormatsYaml() {\n")
  string(APPEND text "  static constexpr char kText[] = ${literal};\n")
  string(APPEND text "  return {kText, sizeof(kText) - 1};\n}\n}  // namespace schedmate::tracker\n")
  schedmate_add_generated_source(${target} ${out} "${text}")
endfunction()
