# Read by CPack once per generator (CPACK_PROJECT_CONFIG_FILE).
if(CPACK_GENERATOR STREQUAL "DEB")
  # Debian packages install into /usr. DESTDIR staging keeps CMAKE_INSTALL_PREFIX=/usr during the
  # install, so install-time code can tell a system install (where the tools need no RUNPATH).
  set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
  set(CPACK_INSTALL_PREFIX "/usr")
  set(CPACK_SET_DESTDIR ON)
endif()
