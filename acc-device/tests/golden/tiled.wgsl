// tiled
@group(0) @binding(0) var<storage, read_write> p0: array<u32>; // out
struct Params {
    p1: u64,
    p2: u64,
    p3: u32,
    b0: u32,
    n0: u32,
    acc_groups: u32,
}
@group(0) @binding(1) var<storage, read> params: Params;
@group(0) @binding(2) var<storage, read_write> acc_status: array<atomic<u32>, 5>;
@group(0) @binding(3) var<storage, read_write> acc_partials_0: array<u32>;
var<workgroup> acc_shared_0_0: array<u32, 256>;
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
fn tiled_gpu(@builtin(global_invocation_id) acc_gid: vec3<u32>, @builtin(local_invocation_index) acc_lid: u32, @builtin(workgroup_id) acc_wg: vec3<u32>, @builtin(num_workgroups) acc_nwg: vec3<u32>) {
    var l0: u32;
    var l1: u64;
    var l2: u64;
    var l3: u64;
    var l4: u64;
    var l5: u64;
    var l6: u64;
    l0 = 0u;
    l0 = 0u;
    let acc_trips_g0: u64 = ((params.p1 / 32lu) + select(0lu, 1lu, ((params.p1 % 32lu) != 0lu)));
    let acc_trips_g1: u64 = ((params.p2 / 8lu) + select(0lu, 1lu, ((params.p2 % 8lu) != 0lu)));
    let acc_trips_g: u64 = acc_trips_g0 * acc_trips_g1;
    let acc_chunks_g: u32 = acc_chunks_of(acc_trips_g);
    var acc_c_g: u32 = 0u;
    for (; acc_c_g < acc_chunks_g; acc_c_g = acc_c_g + 1u) {
    let acc_base_g: u64 = u64(acc_c_g) << 31u;
    let acc_left_g: u64 = acc_trips_g - acc_base_g;
    let acc_end_g: u32 = select(u32(acc_left_g), 2147483648u, (u32(acc_left_g >> 32u) | (u32(acc_left_g) >> 31u)) != 0u);
    var acc_k_g: u32 = acc_wg.x;
    for (; acc_k_g < acc_end_g; acc_k_g = acc_k_g + acc_nwg.x) {
        if (u32(acc_trips_g >> 32u) == 0u) {
            var acc_rest_g32: u32 = u32((acc_base_g + u64(acc_k_g)));
            l5 = 0lu + u64(acc_rest_g32 % u32(acc_trips_g1)) * 1lu;
            acc_rest_g32 = acc_rest_g32 / u32(acc_trips_g1);
            l3 = 0lu + u64(acc_rest_g32) * 1lu;
        } else {
            var acc_rest_g: u64 = u64((acc_base_g + u64(acc_k_g)));
            l5 = 0lu + u64(acc_rest_g % u64(acc_trips_g1)) * 1lu;
            acc_rest_g = acc_rest_g / u64(acc_trips_g1);
            l3 = 0lu + u64(acc_rest_g) * 1lu;
        }
        {
    let acc_trips_v0: u64 = 32lu;
    let acc_trips_v1: u64 = 8lu;
    let acc_trips_v: u64 = acc_trips_v0 * acc_trips_v1;
    let acc_chunks_v: u32 = acc_chunks_of(acc_trips_v);
    var acc_c_v: u32 = 0u;
    for (; acc_c_v < acc_chunks_v; acc_c_v = acc_c_v + 1u) {
    let acc_base_v: u64 = u64(acc_c_v) << 31u;
    let acc_left_v: u64 = acc_trips_v - acc_base_v;
    let acc_end_v: u32 = select(u32(acc_left_v), 2147483648u, (u32(acc_left_v >> 32u) | (u32(acc_left_v) >> 31u)) != 0u);
    var acc_k_v: u32 = acc_lid;
    for (; acc_k_v < acc_end_v; acc_k_v = acc_k_v + 256u) {
        if (u32(acc_trips_v >> 32u) == 0u) {
            var acc_rest_v32: u32 = u32((acc_base_v + u64(acc_k_v)));
            l6 = 0lu + u64(acc_rest_v32 % u32(acc_trips_v1)) * 1lu;
            acc_rest_v32 = acc_rest_v32 / u32(acc_trips_v1);
            l4 = 0lu + u64(acc_rest_v32) * 1lu;
        } else {
            var acc_rest_v: u64 = u64((acc_base_v + u64(acc_k_v)));
            l6 = 0lu + u64(acc_rest_v % u64(acc_trips_v1)) * 1lu;
            acc_rest_v = acc_rest_v / u64(acc_trips_v1);
            l4 = 0lu + u64(acc_rest_v) * 1lu;
        }
            if (((((l3 * 32lu) + l4) < params.p1) && (((l5 * 8lu) + l6) < params.p2))) {
                l1 = (0lu + (((l3 * 32lu) + l4) * 1lu));
                l2 = (0lu + (((l5 * 8lu) + l6) * 1lu));
                { let acc_i = ((l1 * params.p2) + l2); if (acc_in_bounds(0u, acc_i, params.n0)) { p0[params.b0 + u32(acc_i)] = u32(((l1 * params.p2) + l2)); } }
                l0 = (l0 + 1u);
            }
    }
    }
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
