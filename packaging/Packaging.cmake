# Install rules and the Debian package (included from the top-level CMakeLists.txt).
#
#   cmake --build build --target deb      # builds schedmate, then cpack: build/packages/*.deb
#   (or: cmake --build build --target schedmate && cd build && cpack)
#
# Three install components; the package holds all of them:
#   schedmate  the binary, job_submit.lua, Prometheus/Grafana files, example configs (default
#              `cmake --install`, relative to the prefix);
#   man        schedmate(1) from the binary's --help (help2man; generated at install time, so the
#              default build never needs help2man);
#   service    Debian paths outside the prefix: the systemd unit, /etc/default/schedmate and
#              /etc/schedmate/schedmate.yaml (only on request: cpack, or --component service).
# The package build stays out of the default `cmake --build`: nothing here is part of ALL. Nor
# does installing build ALL first (CMAKE_SKIP_INSTALL_ALL_DEPENDENCY): the `deb` target builds the
# one binary the package holds, and cpack packages the build tree as it is.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
set(SCHEDMATE_PACKAGING_DIR ${CMAKE_CURRENT_LIST_DIR})

install(FILES ${PROJECT_SOURCE_DIR}/src/slurm/job_submit.lua
        DESTINATION ${CMAKE_INSTALL_DATADIR}/schedmate COMPONENT schedmate)
install(FILES ${PROJECT_SOURCE_DIR}/config/prometheus/alerts.yml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/schedmate/prometheus COMPONENT schedmate)
install(FILES ${PROJECT_SOURCE_DIR}/config/grafana/schedmate-dashboard.json
        DESTINATION ${CMAKE_INSTALL_DATADIR}/schedmate/grafana COMPONENT schedmate)
install(FILES ${PROJECT_SOURCE_DIR}/config/schedmate.example.yaml
              ${PROJECT_SOURCE_DIR}/config/llm.example.yaml
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples COMPONENT schedmate)

set(SCHEDMATE_MAN_DIR ${CMAKE_BINARY_DIR}/packaging/man)
install(CODE "
  execute_process(COMMAND \"${CMAKE_COMMAND}\" -DSCHEDMATE=$<TARGET_FILE:schedmate>
                          -DSTATIC_INCLUDE=${SCHEDMATE_PACKAGING_DIR}/schedmate.h2m
                          -DOUT=${SCHEDMATE_MAN_DIR}
                          -P ${SCHEDMATE_PACKAGING_DIR}/GenerateManPage.cmake
                  RESULT_VARIABLE man_rc)
  if(NOT man_rc EQUAL 0)
    message(FATAL_ERROR \"generating schedmate.1 failed (see above)\")
  endif()" COMPONENT man EXCLUDE_FROM_ALL)
install(FILES ${SCHEDMATE_MAN_DIR}/schedmate.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
        COMPONENT man EXCLUDE_FROM_ALL)

# Debian 12 keeps packaged units in /lib/systemd/system.
install(FILES ${SCHEDMATE_PACKAGING_DIR}/schedmate.service DESTINATION /lib/systemd/system
        COMPONENT service EXCLUDE_FROM_ALL)
install(FILES ${SCHEDMATE_PACKAGING_DIR}/default.schedmate DESTINATION /etc/default
        RENAME schedmate COMPONENT service EXCLUDE_FROM_ALL)
install(FILES ${PROJECT_SOURCE_DIR}/config/schedmate.example.yaml DESTINATION /etc/schedmate
        RENAME schedmate.yaml COMPONENT service EXCLUDE_FROM_ALL)

set(SCHEDMATE_PACKAGE_MAINTAINER
    "schedmate maintainers <maintainers@users.noreply.a-seed-5ad9c428.example>"
    CACHE STRING "Maintainer field of the .deb")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME schedmate)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/packages)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
set(CPACK_COMPONENTS_ALL schedmate man service)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "semantic-aware scheduling companion for Slurm GPU clusters")
# The synopsis is the summary above; this is the extended description.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "schedmate reads what schedulers ignore (job code, running logs, past jobs)
and turns it into duration estimates, progress metrics, failure diagnoses
and better scheduling. This package runs `schedmate serve` beside slurmctld
as the systemd service schedmate.service (user schedmate, state in
/var/lib/schedmate) and ships Slurm's job_submit.lua hook, Prometheus alert
rules and a Grafana dashboard.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_NAME schedmate)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${SCHEDMATE_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Depends = adduser (postinst/postrm) + what dpkg-shlibdeps finds for the binary (needs dpkg-dev).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "curl, slurm-client")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "slurmctld, prometheus")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${SCHEDMATE_PACKAGING_DIR}/debian/postinst ${SCHEDMATE_PACKAGING_DIR}/debian/prerm
    ${SCHEDMATE_PACKAGING_DIR}/debian/postrm ${SCHEDMATE_PACKAGING_DIR}/debian/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_SOURCE_GENERATOR "")  # no source package: `git archive` makes one without build trees
include(CPack)

add_custom_target(deb
  COMMAND ${CMAKE_CPACK_COMMAND} -G DEB --config ${CMAKE_BINARY_DIR}/CPackConfig.cmake
  WORKING_DIRECTORY ${CMAKE_BINARY_DIR}
  DEPENDS schedmate
  COMMENT "Building the schedmate .deb in ${CMAKE_BINARY_DIR}/packages"
  USES_TERMINAL)
