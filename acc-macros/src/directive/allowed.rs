//! Which clauses each directive takes (checklist tables D1-D18 and the clause table), and which
//! of them may follow a `device_type` clause (3.3 section 2.4).

use super::clause::ClauseName as C;
use super::DirectiveKind as D;

const COMPUTE_DATA: &[C] = &[
    C::Copy,
    C::Copyin,
    C::Copyout,
    C::Create,
    C::NoCreate,
    C::Present,
    C::Deviceptr,
    C::Attach,
    C::Default,
];
const COMPUTE_COMMON: &[C] = &[
    C::Async,
    C::Wait,
    C::DeviceType,
    C::If,
    C::SelfClause,
    C::Unchecked,
];
const PARALLEL_ONLY: &[C] = &[
    C::NumGangs,
    C::NumWorkers,
    C::VectorLength,
    C::Reduction,
    C::Private,
    C::Firstprivate,
];
const SERIAL_ONLY: &[C] = &[C::Reduction, C::Private, C::Firstprivate];
const KERNELS_ONLY: &[C] = &[C::NumGangs, C::NumWorkers, C::VectorLength];
const LOOP: &[C] = &[
    C::Collapse,
    C::Gang,
    C::Worker,
    C::Vector,
    C::Seq,
    C::Independent,
    C::Auto,
    C::Tile,
    C::DeviceType,
    C::Private,
    C::Reduction,
];

/// Whether directive `d` takes clause `c`.
pub fn allows(d: D, c: C) -> bool {
    let lists: &[&[C]] = match d {
        D::Parallel => &[COMPUTE_COMMON, COMPUTE_DATA, PARALLEL_ONLY],
        D::Serial => &[COMPUTE_COMMON, COMPUTE_DATA, SERIAL_ONLY],
        D::Kernels => &[COMPUTE_COMMON, COMPUTE_DATA, KERNELS_ONLY],
        D::ParallelLoop => &[COMPUTE_COMMON, COMPUTE_DATA, PARALLEL_ONLY, LOOP],
        D::SerialLoop => &[COMPUTE_COMMON, COMPUTE_DATA, SERIAL_ONLY, LOOP],
        D::KernelsLoop => &[COMPUTE_COMMON, COMPUTE_DATA, KERNELS_ONLY, LOOP],
        D::Loop => &[LOOP],
        D::Data => &[&[C::If, C::Async, C::Wait, C::DeviceType], COMPUTE_DATA],
        D::EnterData => &[&[C::If, C::Async, C::Wait, C::Copyin, C::Create, C::Attach]],
        D::ExitData => &[&[
            C::If,
            C::Async,
            C::Wait,
            C::Copyout,
            C::Delete,
            C::Detach,
            C::Finalize,
        ]],
        D::HostData => &[&[C::UseDevice, C::If, C::IfPresent]],
        D::Atomic => &[&[C::Read, C::Write, C::Update, C::Capture]],
        D::Declare => &[&[
            C::Copy,
            C::Copyin,
            C::Copyout,
            C::Create,
            C::Present,
            C::Deviceptr,
            C::DeviceResident,
            C::Link,
        ]],
        D::Routine => &[&[
            C::Gang,
            C::Worker,
            C::Vector,
            C::Seq,
            C::Bind,
            C::DeviceType,
            C::Nohost,
        ]],
        D::Update => &[&[
            C::Async,
            C::Wait,
            C::DeviceType,
            C::If,
            C::IfPresent,
            C::SelfClause,
            C::Host,
            C::Device,
        ]],
        D::Wait => &[&[C::Async, C::If]],
        D::Init | D::Shutdown => &[&[C::DeviceType, C::DeviceNum, C::If]],
        D::Set => &[&[C::DefaultAsync, C::DeviceNum, C::DeviceType, C::If]],
        D::Offload | D::Cache => &[],
    };
    lists.iter().any(|l| l.contains(&c))
}

/// Whether clause `c` may follow a `device_type` clause on directive `d` (3.3 section 2.4 and
/// the "Restrictions" paragraph of each construct).
pub fn allows_after_device_type(d: D, c: C) -> bool {
    let after: &[C] = match d {
        D::Parallel | D::Kernels => &[
            C::Async,
            C::Wait,
            C::NumGangs,
            C::NumWorkers,
            C::VectorLength,
        ],
        D::Serial => &[C::Async, C::Wait],
        D::Loop => &[
            C::Collapse,
            C::Gang,
            C::Worker,
            C::Vector,
            C::Seq,
            C::Independent,
            C::Auto,
            C::Tile,
        ],
        D::ParallelLoop | D::KernelsLoop => &[
            C::Async,
            C::Wait,
            C::NumGangs,
            C::NumWorkers,
            C::VectorLength,
            C::Collapse,
            C::Gang,
            C::Worker,
            C::Vector,
            C::Seq,
            C::Independent,
            C::Auto,
            C::Tile,
        ],
        D::SerialLoop => &[
            C::Async,
            C::Wait,
            C::Collapse,
            C::Gang,
            C::Worker,
            C::Vector,
            C::Seq,
            C::Independent,
            C::Auto,
            C::Tile,
        ],
        D::Data | D::Update => &[C::Async, C::Wait],
        D::Routine => &[C::Gang, C::Worker, C::Vector, C::Seq, C::Bind],
        _ => &[],
    };
    after.contains(&c)
}

/// Whether `device_type` on `d` opens a section of device-specific clauses (on `init`,
/// `shutdown` and `set` it is an ordinary clause selecting the device type).
pub fn device_type_opens_section(d: D) -> bool {
    !matches!(d, D::Init | D::Shutdown | D::Set)
}
