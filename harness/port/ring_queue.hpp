#pragma once
// A growable FIFO ring: amortised O(1), no allocation once it has grown to the working depth
// (std::deque allocates and frees a block every few hundred packets).

#include <cstddef>
#include <utility>
#include <vector>

namespace iocpbench::port {

template <typename T>
class RingQueue {
 public:
  explicit RingQueue(std::size_t initial_capacity = 64) : slots_(round_up(initial_capacity)) {}

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  void push_back(const T& value) {
    if (size_ == slots_.size()) grow();
    slots_[(head_ + size_) & (slots_.size() - 1)] = value;
    ++size_;
  }

  T pop_front() {
    T value = std::move(slots_[head_]);
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
    return value;
  }

  void clear() {
    head_ = 0;
    size_ = 0;
  }

 private:
  static std::size_t round_up(std::size_t n) {
    std::size_t p = 1;
    while (p < n) p <<= 1;
    return p;
  }

  void grow() {
    std::vector<T> bigger(slots_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = std::move(slots_[(head_ + i) & (slots_.size() - 1)]);
    slots_ = std::move(bigger);
    head_ = 0;
  }

  std::vector<T> slots_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace iocpbench::port
