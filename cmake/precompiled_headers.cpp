// The one source of the object libraries that build the precompiled headers
// (cmake/PrecompiledHeaders.cmake): the headers are the target's, this file is empty.
