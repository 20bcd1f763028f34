// reduce
@group(0) @binding(0) var<storage, read> p0: array<f64>; // x
struct Params {
    p1: f64,
    b0: u32,
    n0: u32,
    acc_groups: u32,
}
@group(0) @binding(1) var<storage, read> params: Params;
@group(0) @binding(2) var<storage, read_write> acc_status: array<atomic<u32>, 5>;
@group(0) @binding(3) var<storage, read_write> acc_partials_0: array<f64>;
var<workgroup> acc_shared_0_0: array<f64, 256>;
fn acc_trips32(n: u64) -> u32 {
    if (u32(n >> 32u) != 0u) { atomicCompareExchangeWeak(&acc_status[0], 0u, 3u); return 0u; }
    return u32(n);
}
fn acc_chunks_of(n: u64) -> u32 {
    let c = (n >> 31u) + select(0lu, 1lu, (u32(n) & 2147483647u) != 0u);
    return acc_trips32(c);
}
fn acc_in_bounds(param: u32, i: u64, len: u32) -> bool {
    if (u32(i >> 32u) == 0u && u32(i) < len) { return true; }
    if (atomicCompareExchangeWeak(&acc_status[0], 0u, 1u).exchanged) {
        atomicStore(&acc_status[1], param);
        atomicStore(&acc_status[2], u32(i));
        atomicStore(&acc_status[3], len);
        atomicStore(&acc_status[4], u32(i >> 32u));
    }
    return false;
}
@compute @workgroup_size(256)
fn reduce_gpu(@builtin(global_invocation_id) acc_gid: vec3<u32>, @builtin(local_invocation_index) acc_lid: u32, @builtin(workgroup_id) acc_wg: vec3<u32>, @builtin(num_workgroups) acc_nwg: vec3<u32>) {
    var l0: f64;
    var l1: u64;
    var l2: u64;
    var l3: u64;
    l0 = f64(0.0);
    l1 = 0lu;
    l2 = u64(params.n0);
    l0 = f64(0.0);
    let acc_stride: u32 = acc_nwg.x * 256u;
    let acc_trips: u64 = select(0lu, (l2 - l1), (l1 < l2));
    let acc_fast = acc_trips == 0lu || (((l1 < u64(params.n0)) && ((l1 + u64(acc_trips - 1lu) * 1lu) < u64(params.n0))));
    let acc_trips_g0: u64 = select(0lu, (l2 - l1), (l1 < l2));
    let acc_trips_g: u64 = acc_trips_g0;
    let acc_chunks_g: u32 = acc_chunks_of(acc_trips_g);
    var acc_c_g: u32 = 0u;
    for (; acc_c_g < acc_chunks_g; acc_c_g = acc_c_g + 1u) {
    let acc_base_g: u64 = u64(acc_c_g) << 31u;
    let acc_left_g: u64 = acc_trips_g - acc_base_g;
    let acc_end_g: u32 = select(u32(acc_left_g), 2147483648u, (u32(acc_left_g >> 32u) | (u32(acc_left_g) >> 31u)) != 0u);
    var acc_k_g: u32 = acc_gid.x;
    for (; acc_k_g < acc_end_g; acc_k_g = acc_k_g + acc_stride) {
        l3 = l1 + u64((acc_base_g + u64(acc_k_g))) * 1lu;
        if (acc_fast) {
            l0 = (l0 + p0[params.b0 + u32(l3)]);
        } else {
            l0 = (l0 + p0[params.b0 + select(0u, u32(l3), acc_in_bounds(0u, l3, params.n0))]);
        }
    }
    }
    acc_shared_0_0[acc_lid] = l0;
    workgroupBarrier();
    for (var acc_s: u32 = 128u; acc_s > 0u; acc_s = acc_s >> 1u) {
        if (acc_lid < acc_s) { acc_shared_0_0[acc_lid] = (acc_shared_0_0[acc_lid] + acc_shared_0_0[acc_lid + acc_s]); }
        workgroupBarrier();
    }
    if (acc_lid == 0u) { acc_partials_0[acc_wg.x] = acc_shared_0_0[0]; }
}
