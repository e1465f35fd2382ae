// The judge's one memo: the inputs and references made for the last case, kept for the next
// check of the same case (a lab's tests run each case for every version in a row, so the largest
// references are drawn and computed once, not once per version).
#pragma once

#include <memory>
#include <utility>

namespace labkit {

// Keeps the value made for the last key asked for. get(key, make) returns it while the key is
// the same and otherwise frees it first, then calls make() for the new one: a reference may hold
// gigabytes, and two never live at once here. A holder of the returned pointer keeps its value
// alive after the memo moves on. Key needs ==; a std::tuple of the case's fields is the usual.
// One memo per family, used from the test's thread only.
template <typename Key, typename Value>
class KeepLast {
 public:
  template <typename Make>
  std::shared_ptr<const Value> get(const Key& key, Make&& make) {
    if (value_ != nullptr && key_ == key) return value_;
    value_.reset();
    value_ = std::make_shared<const Value>(std::forward<Make>(make)());
    key_ = key;
    return value_;
  }

 private:
  Key key_{};
  std::shared_ptr<const Value> value_;
};

}  // namespace labkit
