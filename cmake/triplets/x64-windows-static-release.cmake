# vcpkg triplet for the msvc preset in CI (.github/workflows/matrix.yml): vcpkg's
# x64-windows-static (static libraries, static CRT, the msvc preset's
# CMAKE_MSVC_RUNTIME_LIBRARY "MultiThreaded") with release builds only. The preset builds
# Release alone, so vcpkg's default second, Debug, build of every port is time spent for
# nothing on each cold runner. The workflow names this folder in VCPKG_OVERLAY_TRIPLETS and the
# triplet in VCPKG_TARGET_TRIPLET and VCPKG_HOST_TRIPLET.
set(VCPKG_TARGET_ARCHITECTURE x64)
set(VCPKG_CRT_LINKAGE static)
set(VCPKG_LIBRARY_LINKAGE static)
set(VCPKG_BUILD_TYPE release)
