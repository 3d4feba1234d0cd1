//! The SM clock and temperature from NVML (`libnvidia-ml.so.1`, opened at run time so the
//! benches start on machines without it). Without NVML the clock falls back to the device's
//! maximum clock attribute, labelled as such.

use crate::harness::host::stamp::{Clock, ClockSource};
use libloading::Library;
use std::ffi::CString;
use std::mem::ManuallyDrop;
use std::os::raw::{c_char, c_uint, c_void};

type NvmlDevice = *mut c_void;
type InitFn = unsafe extern "C" fn() -> c_uint;
type ByPciFn = unsafe extern "C" fn(*const c_char, *mut NvmlDevice) -> c_uint;
type ClockFn = unsafe extern "C" fn(NvmlDevice, c_uint, *mut c_uint) -> c_uint;
type TempFn = unsafe extern "C" fn(NvmlDevice, c_uint, *mut c_uint) -> c_uint;
type DriverFn = unsafe extern "C" fn(*mut c_char, c_uint) -> c_uint;

const NVML_SUCCESS: c_uint = 0;
const NVML_CLOCK_SM: c_uint = 1;
const NVML_TEMPERATURE_GPU: c_uint = 0;

/// One GPU as NVML sees it.
pub struct Nvml {
    device: NvmlDevice,
    clock: ClockFn,
    temperature: Option<TempFn>,
    pub driver: Option<String>,
    // Keeps the function pointers above valid; never unloaded (see `Cublas`).
    _lib: ManuallyDrop<Library>,
}

impl Nvml {
    /// Opens NVML and finds the device with this PCI bus id. `Err` says why not.
    pub fn open(pci_bus_id: &str) -> Result<Nvml, String> {
        let lib = ["libnvidia-ml.so.1", "libnvidia-ml.so"]
            .iter()
            .find_map(|name| unsafe { Library::new(name) }.ok())
            .ok_or("libnvidia-ml.so.1 not found on the loader path")?;
        // SAFETY: the signatures match nvml.h; the library outlives the pointers (held in `_lib`).
        unsafe {
            let init: InitFn = *lib
                .get::<InitFn>(b"nvmlInit_v2\0")
                .map_err(|e| e.to_string())?;
            let by_pci: ByPciFn = *lib
                .get::<ByPciFn>(b"nvmlDeviceGetHandleByPciBusId_v2\0")
                .map_err(|e| e.to_string())?;
            let clock: ClockFn = *lib
                .get::<ClockFn>(b"nvmlDeviceGetClockInfo\0")
                .map_err(|e| e.to_string())?;
            let temperature = lib
                .get::<TempFn>(b"nvmlDeviceGetTemperature\0")
                .ok()
                .map(|s| *s);
            let status = init();
            if status != NVML_SUCCESS {
                return Err(format!("nvmlInit_v2 returned {status}"));
            }
            let bus = CString::new(pci_bus_id).map_err(|e| e.to_string())?;
            let mut device: NvmlDevice = std::ptr::null_mut();
            let status = by_pci(bus.as_ptr(), &mut device);
            if status != NVML_SUCCESS {
                return Err(format!(
                    "nvmlDeviceGetHandleByPciBusId_v2({pci_bus_id}) returned {status}"
                ));
            }
            let driver = lib
                .get::<DriverFn>(b"nvmlSystemGetDriverVersion\0")
                .ok()
                .and_then(|f| {
                    let mut buf = [0 as c_char; 96];
                    (f(buf.as_mut_ptr(), buf.len() as c_uint) == NVML_SUCCESS).then(|| {
                        std::ffi::CStr::from_ptr(buf.as_ptr())
                            .to_string_lossy()
                            .into_owned()
                    })
                });
            Ok(Nvml {
                device,
                clock,
                temperature,
                driver,
                _lib: ManuallyDrop::new(lib),
            })
        }
    }

    /// The current SM clock and temperature.
    pub fn read(&self) -> Clock {
        let mut mhz = 0;
        // SAFETY: `device` came from NVML and the out-pointer is a live local.
        let ok = unsafe { (self.clock)(self.device, NVML_CLOCK_SM, &mut mhz) } == NVML_SUCCESS;
        let temperature_c = self.temperature.and_then(|f| {
            let mut t = 0;
            (unsafe { f(self.device, NVML_TEMPERATURE_GPU, &mut t) } == NVML_SUCCESS).then_some(t)
        });
        Clock {
            mhz: ok.then_some(mhz),
            source: if ok {
                ClockSource::Nvml
            } else {
                ClockSource::Unavailable
            },
            temperature_c,
        }
    }
}

/// Reads the SM clock: from NVML when it opened, else the maximum clock attribute.
pub fn read_clock(nvml: Option<&Nvml>, max_clock_mhz: Option<u32>) -> Clock {
    match nvml {
        Some(n) => n.read(),
        None => Clock {
            mhz: max_clock_mhz,
            source: if max_clock_mhz.is_some() {
                ClockSource::MaxClockAttribute
            } else {
                ClockSource::Unavailable
            },
            temperature_c: None,
        },
    }
}
