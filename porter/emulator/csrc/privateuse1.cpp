// An emulated accelerator for torch's PrivateUse1 backend: tensors on "<name>:N" live in host
// memory and every op runs the CPU kernel on zero-copy CPU aliases of its inputs. The name
// ("mlu", "npu") is the one Python gives PrivateUse1 (torch.utils.rename_privateuse1_backend)
// before the first tensor is made; nothing here depends on it, so one build serves every
// emulated target, and messages read it back (c10::get_privateuse1_backend).
//
// Why C++ and not a Python __torch_dispatch__ subclass: a tiny Llama trains at 1.0x CPU
// time here against 3.5-4.4x for an unwrap/rewrap prototype (benchmarks/README.md), and
// the Python route cannot give DDP a pinned allocator nor load checkpoints whose storages
// are tagged mlu:0 / npu:0.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/EmptyTensor.h>
#include <ATen/autocast_mode.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/as_strided_cpu_dispatch.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/core/impl/alloc_cpu.h>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <torch/csrc/jit/runtime/operator.h>
#include <torch/extension.h>
#include <torch/library.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <unordered_set>

namespace {

constexpr int kMaxDevices = 16;
std::atomic<int> g_device_count{1};
thread_local c10::DeviceIndex t_current_device = 0;
// The variable that selects cards on the emulated target (MLU_VISIBLE_DEVICES,
// ASCEND_RT_VISIBLE_DEVICES), named in the invalid-ordinal message; set once at install.
std::string g_visible_variable = "the visible-devices variable";

// Host accounting per device: what memory_allocated / max_memory_allocated report.
std::atomic<int64_t> g_allocated[kMaxDevices];
std::atomic<int64_t> g_peak[kMaxDevices];

void count_alloc(int dev, int64_t bytes) {
  int64_t now = g_allocated[dev].fetch_add(bytes) + bytes;
  int64_t peak = g_peak[dev].load();
  while (now > peak && !g_peak[dev].compare_exchange_weak(peak, now)) {
  }
}

c10::DeviceIndex check_index(c10::DeviceIndex index) {
  TORCH_CHECK(index >= 0 && index < g_device_count.load(),
              c10::get_privateuse1_backend(), ": invalid device ordinal ", int(index), " (", g_device_count.load(),
              " emulated device(s); set ", g_visible_variable, " or porter's --devices)");
  return index;
}

// A block of host memory that remembers its size and device, so the counters can be
// decremented when the last tensor using it goes away.
struct Block {
  void* data;
  int64_t bytes;
  int device;
  c10::intrusive_ptr<c10::StorageImpl> adopted;  // set when wrapping a CPU result
};

void free_block(void* ctx) {
  auto* block = static_cast<Block*>(ctx);
  g_allocated[block->device].fetch_sub(block->bytes);
  if (!block->adopted) c10::free_cpu(block->data);
  delete block;
}

struct DeviceAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t nbytes) override {
    c10::DeviceIndex dev = t_current_device;
    void* data = nbytes ? c10::alloc_cpu(nbytes) : nullptr;
    auto* block = new Block{data, static_cast<int64_t>(nbytes), dev, {}};
    count_alloc(dev, static_cast<int64_t>(nbytes));
    return {data, block, &free_block, c10::Device(c10::DeviceType::PrivateUse1, dev)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }
};
DeviceAllocator g_allocator;

// Pinned host memory: plain host memory whose pointers are remembered, because DataLoader
// (pin_memory=True) and DDP's reducer ask the accelerator for it.
std::mutex g_pinned_mutex;
std::unordered_set<void*> g_pinned;

void free_pinned(void* ptr) {
  {
    std::lock_guard<std::mutex> lock(g_pinned_mutex);
    g_pinned.erase(ptr);
  }
  c10::free_cpu(ptr);
}

struct PinnedAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t nbytes) override {
    void* data = nbytes ? c10::alloc_cpu(nbytes) : nullptr;
    if (data) {
      std::lock_guard<std::mutex> lock(g_pinned_mutex);
      g_pinned.insert(data);
    }
    return {data, data, &free_pinned, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &free_pinned; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }
};
PinnedAllocator g_pinned_allocator;

// One generator per device: device random streams are separate from the CPU's, as on hardware.
std::once_flag g_generators_once;
std::vector<at::Generator> g_generators;

const at::Generator& device_generator(c10::DeviceIndex index) {
  std::call_once(g_generators_once, [] {
    for (int i = 0; i < kMaxDevices; ++i) g_generators.push_back(at::detail::createCPUGenerator(67280421310721ULL + i));
  });
  return g_generators[index < 0 ? t_current_device : index];
}

struct DeviceHooks final : at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return g_device_count.load() > 0; }
  bool hasPrimaryContext(c10::DeviceIndex) const override { return true; }
  c10::DeviceIndex deviceCount() const override { return g_device_count.load(); }
  void setCurrentDevice(c10::DeviceIndex d) const override { t_current_device = check_index(d); }
  c10::DeviceIndex getCurrentDevice() const override { return t_current_device; }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex d) const override {
    auto old = t_current_device;
    t_current_device = check_index(d);
    return old;
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex d) const override { return exchangeDevice(d); }
  const at::Generator& getDefaultGenerator(c10::DeviceIndex d) const override { return device_generator(d); }
  at::Generator getNewGenerator(c10::DeviceIndex) const override { return at::detail::createCPUGenerator(); }
  at::Device getDeviceFromPtr(void*) const override { return {c10::DeviceType::PrivateUse1, t_current_device}; }
  bool isPinnedPtr(const void* data) const override {
    std::lock_guard<std::mutex> lock(g_pinned_mutex);
    return g_pinned.count(const_cast<void*>(data)) > 0;
  }
  c10::Allocator* getPinnedMemoryAllocator() const override { return &g_pinned_allocator; }
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    // Reallocate through our allocator on the storage's device, keeping the old bytes.
    c10::DeviceIndex saved = t_current_device;
    t_current_device = storage.device().index();
    auto fresh = g_allocator.allocate(newsize);
    t_current_device = saved;
    size_t keep = std::min(newsize, storage.nbytes());
    if (keep) std::memcpy(fresh.get(), storage.data(), keep);
    const_cast<c10::Storage&>(storage).set_data_ptr_noswap(std::move(fresh));
    const_cast<c10::Storage&>(storage).set_nbytes(newsize);
  }
};

// Device guard: a thread-local current device, one stream per device, events are timers
// (all work is synchronous, so an event completes when it is recorded).
struct DeviceGuardImpl final : c10::impl::DeviceGuardImplInterface {
  static constexpr c10::DeviceType D = c10::DeviceType::PrivateUse1;
  c10::DeviceType type() const override { return D; }
  c10::Device exchangeDevice(c10::Device d) const override {
    auto old = t_current_device;
    t_current_device = check_index(d.index());
    return {D, old};
  }
  c10::Device getDevice() const override { return {D, t_current_device}; }
  void setDevice(c10::Device d) const override { t_current_device = check_index(d.index()); }
  void uncheckedSetDevice(c10::Device d) const noexcept override { t_current_device = d.index(); }
  c10::Stream getStream(c10::Device d) const override { return c10::Stream(c10::Stream::DEFAULT, d); }
  c10::Stream getNewStream(c10::Device d, int) const override { return c10::Stream(c10::Stream::DEFAULT, d); }
  c10::Stream getStreamFromGlobalPool(c10::Device d, bool) const override { return c10::Stream(c10::Stream::DEFAULT, d); }
  c10::Stream exchangeStream(c10::Stream s) const override { return s; }
  c10::DeviceIndex deviceCount() const noexcept override { return g_device_count.load(); }
  void destroyEvent(void* event, const c10::DeviceIndex) const noexcept override { delete static_cast<double*>(event); }
  void record(void** event, const c10::Stream&, const c10::DeviceIndex, const c10::EventFlag) const override {
    if (!*event) *event = new double(0);
    auto now = std::chrono::steady_clock::now().time_since_epoch();
    *static_cast<double*>(*event) = std::chrono::duration<double, std::milli>(now).count();
  }
  void block(void*, const c10::Stream&) const override {}
  bool queryEvent(void*) const override { return true; }
  bool queryStream(const c10::Stream&) const override { return true; }
  void synchronizeStream(const c10::Stream&) const override {}
  void synchronizeEvent(void*) const override {}
  void synchronizeDevice(const c10::DeviceIndex) const override {}
  void recordDataPtrOnStream(const c10::DataPtr&, const c10::Stream&) const override {}
  double elapsedTime(void* a, void* b, const c10::DeviceIndex) const override {
    TORCH_CHECK(a && b, c10::get_privateuse1_backend(), ": both events must be recorded before elapsed_time()");
    return *static_cast<double*>(b) - *static_cast<double*>(a);
  }
};

bool on_device(const at::Tensor& t) { return t.defined() && t.device().type() == c10::DeviceType::PrivateUse1; }

// A CPU tensor over the same bytes (whole storage, same sizes/strides/offset), so that CPU
// kernels read and write the device tensor in place and views can be mapped back by offset.
// A resizable alias (for out= arguments) may be given a new CPU buffer by the kernel; the
// fallback then copies the result back into the device tensor.
at::Tensor cpu_alias(const at::Tensor& t, bool resizable = false) {
  const auto& storage = t.storage();
  c10::Storage alias_storage(c10::Storage::use_byte_size_t(), storage.nbytes(),
                             at::DataPtr(const_cast<void*>(storage.data()), c10::Device(c10::DeviceType::CPU)),
                             resizable ? c10::GetCPUAllocator() : nullptr, resizable);
  auto impl = c10::make_intrusive<c10::TensorImpl>(std::move(alias_storage), c10::DispatchKeySet(c10::DispatchKey::CPU),
                                                   t.dtype());
  impl->set_sizes_and_strides(t.sizes(), t.strides(), t.storage_offset());
  at::Tensor out(std::move(impl));
  if (t.is_conj()) out._set_conj(true);
  if (t.is_neg()) out._set_neg(true);
  return out;
}

// A device tensor over `storage` with the layout of the CPU tensor `like`.
at::Tensor device_over(c10::Storage storage, const at::Tensor& like, bool zero = false) {
  auto keys = c10::DispatchKeySet(c10::DispatchKey::PrivateUse1);
  if (zero) keys = keys.add(c10::DispatchKey::ZeroTensor);
  auto impl = c10::make_intrusive<c10::TensorImpl>(std::move(storage), keys, like.dtype());
  impl->set_sizes_and_strides(like.sizes(), like.strides(), like.storage_offset());
  at::Tensor out(std::move(impl));
  if (like.is_conj()) out._set_conj(true);
  if (like.is_neg()) out._set_neg(true);
  return out;
}

// A new CPU result becomes a device tensor that owns the CPU buffer (no copy).
at::Tensor adopt(const at::Tensor& r, c10::DeviceIndex dev) {
  if (r._is_zerotensor()) {  // no storage to read: keep the ZeroTensor key (reading it segfaults otherwise)
    return device_over(c10::Storage(c10::Storage::use_byte_size_t(), 0,
                                 c10::DataPtr(nullptr, c10::Device(c10::DeviceType::PrivateUse1, dev)), nullptr, false),
                    r, /*zero=*/true);
  }
  auto owner = c10::intrusive_ptr<c10::StorageImpl>::reclaim_copy(r.storage().unsafeGetStorageImpl());
  int64_t bytes = static_cast<int64_t>(owner->nbytes());
  auto* block = new Block{owner->mutable_data(), bytes, dev, owner};
  count_alloc(dev, bytes);
  c10::DataPtr ptr(block->data, block, &free_block, c10::Device(c10::DeviceType::PrivateUse1, dev));
  c10::Storage storage(c10::Storage::use_byte_size_t(), bytes, std::move(ptr), &g_allocator, /*resizable=*/true);
  return device_over(std::move(storage), r);
}

[[noreturn]] void device_mismatch(const std::string& op, const at::Device& a, const at::Device& b) {
  TORCH_CHECK(false, "Expected all tensors to be on the same device, but found at least two devices, ", a.str(), " and ",
              b.str(), "! (while running ", op, " on the emulated ", c10::get_privateuse1_backend(), ")");
}

// The arguments of one op call: which device of ours it runs on, and the CPU stand-ins.
struct Call {
  std::string op;
  std::optional<c10::Device> device;

  at::Tensor to_cpu(const at::Tensor& t, bool allow_cpu, bool resizable = false) {
    if (!t.defined()) return t;
    if (on_device(t)) {
      if (device && *device != t.device()) device_mismatch(op, *device, t.device());
      device = t.device();
      return cpu_alias(t, resizable);
    }
    // A real accelerator accepts CPU scalars (0-dim) beside device tensors, and CPU index
    // tensors; any other CPU operand is the bug this emulator exists to show.
    if (device && !allow_cpu && t.device().is_cpu() && t.dim() != 0) device_mismatch(op, *device, t.device());
    return t;
  }
};

std::optional<c10::Device> first_device(const torch::jit::Stack& stack, size_t begin) {
  for (size_t i = begin; i < stack.size(); ++i) {
    const auto& iv = stack[i];
    if (iv.isTensor() && on_device(iv.toTensor())) return iv.toTensor().device();
    if (iv.isTensorList())
      for (const at::Tensor t : iv.toTensorList())
        if (on_device(t)) return t.device();
  }
  return std::nullopt;
}

bool is_generator_arg(const c10::Argument& arg) {
  const auto& type = arg.type();
  return type->kind() == c10::TypeKind::OptionalType &&
         type->castRaw<c10::OptionalType>()->getElementType()->kind() == c10::TypeKind::GeneratorType;
}

// The boxed fallback for every op without an explicit kernel of ours: run the CPU kernel on
// aliases, then hand back device tensors (the argument itself for in-place/out=, a view on the
// input's storage for views, a device tensor adopting the buffer for new results).
void device_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  const auto& args = schema.arguments();
  const auto num_args = args.size();
  const auto begin = stack->size() - num_args;

  Call call{schema.operator_name().name, first_device(*stack, begin)};
  std::vector<at::Tensor> originals(num_args);  // the device tensor passed in each slot
  std::vector<at::Tensor> aliases(num_args);
  for (size_t i = 0; i < num_args; ++i) {
    auto& iv = (*stack)[begin + i];
    const auto* alias = args[i].alias_info();
    const bool written = alias && alias->isWrite();
    if (iv.isTensor()) {
      const at::Tensor t = iv.toTensor();
      if (on_device(t)) {
        originals[i] = t;
        aliases[i] = call.to_cpu(t, false, /*resizable=*/written && args[i].kwarg_only());
        iv = aliases[i];
      } else {
        iv = call.to_cpu(t, false);
      }
    } else if (iv.isTensorList()) {
      c10::List<at::Tensor> out;
      for (const at::Tensor t : iv.toTensorList()) out.push_back(call.to_cpu(t, false));
      iv = out;
    } else if (iv.isList() && iv.toList().elementType()->kind() == c10::TypeKind::OptionalType) {
      // index / index_put indices: CPU index tensors are allowed, as on CUDA.
      auto list = iv.toList();
      c10::List<std::optional<at::Tensor>> out;
      for (size_t k = 0; k < list.size(); ++k) {
        c10::IValue e = list.get(k);
        out.push_back(e.isTensor() ? std::optional<at::Tensor>(call.to_cpu(e.toTensor(), true)) : std::nullopt);
      }
      iv = out;
    } else if (iv.isDevice() && iv.toDevice().type() == c10::DeviceType::PrivateUse1) {
      if (!call.device) call.device = iv.toDevice();
      iv = c10::Device(c10::DeviceType::CPU);
    }
  }
  c10::Device dev = call.device.value_or(c10::Device(c10::DeviceType::PrivateUse1, t_current_device));
  if (!dev.has_index()) dev = c10::Device(c10::DeviceType::PrivateUse1, t_current_device);
  // Random ops without an explicit generator draw from the device's own stream.
  for (size_t i = 0; i < num_args; ++i) {
    auto& iv = (*stack)[begin + i];
    if (iv.isNone() && is_generator_arg(args[i])) iv = device_generator(dev.index());
  }

  op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);

  // out= arguments the kernel resized onto a new CPU buffer: resize the device tensor and
  // copy back; resized in place: take over the new shape.
  for (size_t i = 0; i < num_args; ++i) {
    if (!originals[i].defined() || !aliases[i].defined() || !aliases[i].storage().resizable()) continue;
    const at::Tensor& a = aliases[i];
    if (a.storage().data() != originals[i].storage().data()) {
      originals[i].resize_(a.sizes());
      cpu_alias(originals[i]).copy_(a);
    } else if (a.sizes() != originals[i].sizes() || a.strides() != originals[i].strides()) {
      originals[i].unsafeGetTensorImpl()->set_sizes_and_strides(a.sizes(), a.strides(), a.storage_offset());
    }
  }

  const auto& rets = schema.returns();
  const auto nret = rets.size();
  const auto rbegin = stack->size() - nret;
  auto map_back = [&](const at::Tensor& r) -> at::Tensor {
    if (!r.defined() || !r.device().is_cpu()) return r;
    const void* base = r.storage().data();
    if (base) {
      for (size_t i = 0; i < num_args; ++i) {
        if (originals[i].defined() && originals[i].storage().data() == base)
          return device_over(originals[i].storage(), r);  // a view of a device input
      }
    }
    return adopt(r, dev.index());
  };
  for (size_t k = 0; k < nret; ++k) {
    auto& iv = (*stack)[rbegin + k];
    const auto* ralias = rets[k].alias_info();
    if (iv.isTensor()) {
      bool done = false;
      if (ralias && ralias->isWrite()) {
        // In-place / out=: hand back the argument it names.
        for (size_t i = 0; i < num_args && !done; ++i) {
          const auto* a = args[i].alias_info();
          if (a && a->isWrite() && a->beforeSets() == ralias->beforeSets() && originals[i].defined()) {
            iv = originals[i];
            done = true;
          }
        }
      }
      if (!done) iv = map_back(iv.toTensor());
    } else if (iv.isTensorList()) {
      c10::List<at::Tensor> out;
      for (const at::Tensor t : iv.toTensorList()) out.push_back(map_back(t));
      iv = out;
    }
  }
}

// ---- explicit kernels -----------------------------------------------------------------

at::Tensor device_empty(c10::IntArrayRef size, std::optional<at::ScalarType> dtype, std::optional<at::Layout>,
                     std::optional<at::Device> device, std::optional<bool>, std::optional<at::MemoryFormat> mf) {
  c10::DeviceIndex saved = t_current_device;
  if (device && device->has_index()) t_current_device = check_index(device->index());
  auto out = at::detail::empty_generic(size, &g_allocator, c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                       c10::dtype_or_default(dtype), mf);
  t_current_device = saved;
  return out;
}

at::Tensor device_empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride, std::optional<at::ScalarType> dtype,
                             std::optional<at::Layout>, std::optional<at::Device> device, std::optional<bool>) {
  c10::DeviceIndex saved = t_current_device;
  if (device && device->has_index()) t_current_device = check_index(device->index());
  auto out = at::detail::empty_strided_generic(size, stride, &g_allocator, c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                               c10::dtype_or_default(dtype));
  t_current_device = saved;
  return out;
}

at::Tensor device_copy_from(const at::Tensor& self, const at::Tensor& dst, bool) {
  // Host memory on both sides: copy through CPU aliases (dtype and layout handled by CPU copy_).
  at::Tensor src = on_device(self) ? cpu_alias(self) : self;
  at::Tensor out = on_device(dst) ? cpu_alias(dst) : dst;
  out.copy_(src);
  return dst;
}

at::Tensor device_copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  dst.resize_(self.sizes());
  return device_copy_from(self, dst, false);
}

const at::Tensor& device_resize_(const at::Tensor& self, c10::IntArrayRef size, std::optional<at::MemoryFormat> mf) {
  // Same shape bookkeeping as CPU; storage growth goes through resizePrivateUse1Bytes.
  auto* impl = self.unsafeGetTensorImpl();
  int64_t storage_size = 1;
  impl->set_sizes_contiguous(size);
  int64_t numel = impl->numel();
  if (numel > 0) {
    storage_size = (numel + self.storage_offset()) * self.dtype().itemsize();
    if (static_cast<size_t>(storage_size) > self.storage().nbytes()) at::native::resize_bytes_nocuda(self.storage(), storage_size);
  }
  if (mf && *mf != at::MemoryFormat::Preserve) impl->empty_tensor_restride(*mf);
  return self;
}

at::Tensor& device_set_storage(at::Tensor& self, c10::Storage source, int64_t offset, c10::IntArrayRef size, c10::IntArrayRef stride) {
  return at::native::set_storage_cpu_(self, std::move(source), offset, size, stride);
}

at::Tensor& device_set_source_storage(at::Tensor& self, c10::Storage source) {
  int64_t numel = static_cast<int64_t>(source.nbytes() / self.dtype().itemsize());
  return device_set_storage(self, std::move(source), 0, {numel}, {});
}

at::Tensor& device_set_tensor(at::Tensor& self, const at::Tensor& source) {
  return device_set_storage(self, source.storage(), source.storage_offset(), source.sizes(), source.strides());
}

at::Tensor& device_set_empty(at::Tensor& self) {
  c10::Storage storage(c10::Storage::use_byte_size_t(), 0, g_allocator.allocate(0), &g_allocator, true);
  return device_set_storage(self, std::move(storage), 0, {0}, {});
}

// ATen sends PrivateUse1 convolutions to the *_overrideable ops: run the CPU ones.
at::Tensor device_convolution(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                           c10::IntArrayRef stride, c10::IntArrayRef padding, c10::IntArrayRef dilation, bool transposed,
                           c10::IntArrayRef output_padding, int64_t groups) {
  std::optional<at::Tensor> b = bias && bias->defined() ? std::optional<at::Tensor>(cpu_alias(*bias)) : std::nullopt;
  at::Tensor r = at::convolution(cpu_alias(input), cpu_alias(weight), b, stride, padding, dilation, transposed, output_padding, groups);
  return adopt(r.contiguous(), input.device().index());
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> device_convolution_backward(
    const at::Tensor& grad, const at::Tensor& input, const at::Tensor& weight, c10::IntArrayRef stride,
    c10::IntArrayRef padding, c10::IntArrayRef dilation, bool transposed, c10::IntArrayRef output_padding, int64_t groups,
    std::array<bool, 3> mask) {
  std::vector<int64_t> bias_sizes{weight.size(transposed ? 1 : 0) * (transposed ? groups : 1)};
  auto [gi, gw, gb] = at::convolution_backward(cpu_alias(grad), cpu_alias(input), cpu_alias(weight), bias_sizes, stride,
                                               padding, dilation, transposed, output_padding, groups, mask);
  auto dev = input.device().index();
  return {gi.defined() ? adopt(gi, dev) : gi, gw.defined() ? adopt(gw, dev) : gw, gb.defined() ? adopt(gb, dev) : gb};
}

}  // namespace

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction<&device_fallback>()); }

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", device_empty);
  m.impl("empty_strided", device_empty_strided);
  m.impl("as_strided", at::native::as_strided_tensorimpl);
  m.impl("view", at::native::view);
  m.impl("_reshape_alias", at::native::_reshape_alias);
  m.impl("_copy_from", device_copy_from);
  m.impl("_copy_from_and_resize", device_copy_from_and_resize);
  m.impl("resize_", device_resize_);
  m.impl("set_.source_Storage_storage_offset", device_set_storage);
  m.impl("set_.source_Storage", device_set_source_storage);
  m.impl("set_.source_Tensor", device_set_tensor);
  m.impl("set_", device_set_empty);
  // Structured functional ops whose composite path passes a wrongly shaped out= (torch
  // warns on CPU too): run the CPU functional kernel instead, as CUDA has its own.
  m.impl("mse_loss", torch::CppFunction::makeFromBoxedFunction<&device_fallback>());
  m.impl("convolution_overrideable", device_convolution);
  m.impl("convolution_backward_overrideable", device_convolution_backward);
}

// Copies of conj/neg tensors must not be materialised by those fallbacks (it recursed).
TORCH_LIBRARY_IMPL(aten, Conjugate, m) { m.impl("_copy_from", torch::CppFunction::makeFallthrough()); }
TORCH_LIBRARY_IMPL(aten, Negative, m) { m.impl("_copy_from", torch::CppFunction::makeFallthrough()); }

// torch.autocast("mlu"/"npu"): the op lists CUDA uses, cast for PrivateUse1.
#define ADD_NS(RAW_OP) at::RAW_OP
TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) { m.fallback(torch::CppFunction::makeFallthrough()); }
namespace at::autocast {
TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
#define EMU_LOW(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
  AT_FORALL_LOWER_PRECISION_FP(EMU_LOW)
#define EMU_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
  AT_FORALL_FP32(EMU_FP32)
#define EMU_FP32_OPT(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
  AT_FORALL_FP32_SET_OPT_DTYPE(EMU_FP32_OPT)
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE)
#define EMU_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)
  AT_FORALL_PROMOTE(EMU_PROMOTE)
}
}  // namespace at::autocast

C10_REGISTER_GUARD_IMPL(PrivateUse1, DeviceGuardImpl);
// torch.UntypedStorage(n, device="npu") (checkpoint loading) asks the registry.
REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &g_allocator);

namespace {
DeviceHooks* g_hooks = nullptr;

void set_device_count(int n) {
  TORCH_CHECK(n >= 0 && n <= kMaxDevices, c10::get_privateuse1_backend(), " emulator: device count must be 0..", kMaxDevices);
  g_device_count.store(n);
}
}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("register_hooks", [] {
    if (!g_hooks) {
      g_hooks = new DeviceHooks();
      at::RegisterPrivateUse1HooksInterface(g_hooks);
    }
  });
  m.def("set_device_count", &set_device_count);
  m.def("set_visible_variable", [](const std::string& name) { g_visible_variable = name; });
  m.def("device_count", [] { return g_device_count.load(); });
  m.def("current_device", [] { return int(t_current_device); });
  m.def("set_device", [](int d) { t_current_device = check_index(d); });
  m.def("memory_allocated", [](int d) { return g_allocated[check_index(d)].load(); });
  m.def("max_memory_allocated", [](int d) { return g_peak[check_index(d)].load(); });
  m.def("reset_peak", [](int d) { g_peak[check_index(d)].store(g_allocated[d].load()); });
  // A CPU tensor sharing a device tensor's bytes and keeping its storage alive: the cncl/hccl
  // process group hands these to gloo, whose work may finish after the caller returns.
  m.def("share_as_cpu", [](const at::Tensor& t) {
    TORCH_CHECK(on_device(t), "share_as_cpu: expected a ", c10::get_privateuse1_backend(), " tensor, got ", t.device().str());
    auto* keep = new c10::Storage(t.storage());
    c10::DataPtr ptr(const_cast<void*>(t.storage().data()), keep,
                     [](void* ctx) { delete static_cast<c10::Storage*>(ctx); }, c10::Device(c10::DeviceType::CPU));
    c10::Storage storage(c10::Storage::use_byte_size_t(), t.storage().nbytes(), std::move(ptr), nullptr, false);
    auto impl = c10::make_intrusive<c10::TensorImpl>(std::move(storage), c10::DispatchKeySet(c10::DispatchKey::CPU), t.dtype());
    impl->set_sizes_and_strides(t.sizes(), t.strides(), t.storage_offset());
    return at::Tensor(std::move(impl));
  });
  m.def("default_generator", [](int d) { return device_generator(check_index(d)); });
  // How many owners a collective's Work has: its Python object counts one and this call one, so
  // 2 means nothing else holds it (gloo's worker thread holds it until its loop lets go).
  m.def("work_owners", [](const c10::intrusive_ptr<c10d::Work>& work) { return work.use_count(); });
}
