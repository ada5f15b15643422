#pragma once
// Host memory mapped by Stagehand itself with transparent huge pages asked for (MADV_HUGEPAGE),
// for the large buffers that are pinned in place for uploads (cudaHostRegister): a proving key's
// point sets and constraint matrix, and CudaDevice's pinned staging buffers. Pinning 2 MiB pages
// costs less than pinning 512 pages of 4 KiB, and first writes fault once per 2 MiB. The advice
// has a risk: where the kernel defragments on madvise (the usual setting) a fault waits for
// compaction when free memory is fragmented (on the loaded 2-core development machine a fresh
// 1 GiB buffer took several times longer to write with it), so only buffers that are pinned take it.
// Where the kernel has no transparent huge pages the mapping still works, in 4 KiB pages.

#include <cstddef>

namespace stagehand {

// `bytes` of zero-filled pages (faulted in by the first write), or nullptr with errno set.
void* map_huge_pages(std::size_t bytes) noexcept;
// Gives back what map_huge_pages(bytes) returned.
void unmap_pages(void* pointer, std::size_t bytes) noexcept;

}  // namespace stagehand
