#pragma once
// Uploads from pageable host memory through two pinned staging buffers: the host's threads copy a
// chunk into one buffer while the other buffer's chunk crosses the link. For bytes that go up once
// (a key's resident sets and its constraint matrix, at the key's set-up on a device): from pageable
// memory the driver copies at a fraction of the link's rate and holds the device's thread for
// blocking calls meanwhile (a 2^24 key's resident sets on the H200 machine;
// bench/journal/2026-12-04.md has the figures).

#include "device/device.hpp"
#include "workloads/host_work.hpp"

#include <vector>

namespace stagehand::groth16 {

struct PageableUpload {
  DevicePointer target;
  HostRange source;  // pageable (or any) host memory that stays valid until the call returns
};

// Each source to its target, in order; returns when every byte is on the device. The staging
// buffers (two of at most `chunk_bytes`) are made and freed inside, and freed on failure too.
asio::awaitable<void> upload_through_pinned(Device& device, HostWork& host_work,
                                            const std::vector<PageableUpload>& uploads,
                                            Bytes chunk_bytes = Bytes{128} << 20);

}  // namespace stagehand::groth16
