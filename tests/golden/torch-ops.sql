-- A hand-made profile for t-report-torch-ops, loaded into the empty profile of `cprof-run -- /bin/true` (the
-- schema, views included): PyTorch's op ranges as the preload stores them (category 0x746f7263 = 1953460835,
-- names without torch's seq/op_id), the hooked calls inside them and their GPU work. Times are offsets from
-- T0 = 1700000000500000000 ns.
--   aten::copy_  21900..40000   cudaMemcpy 22000..40000 -> memcpy 2000 ns
--   aten::linear 41000..71000   __cudaLaunchKernel 42000..47000 -> kernel 3500 ns
--     aten::empty 41100..41200  nothing
--     aten::addmm 47500..70500  cublasSgemm_v2 48000..70000 -> GEMM kernel 4500 ns
--   aten::add    70900..76500   on thread 4243: cudaMemsetAsync 71000..76000 -> memset 500 ns
--   aten::sum    85000..95000
--     aten::sum  86000..90500   cudaDeviceSynchronize 86000..90000 (no GPU work)
--   step         500..99000     a user's range (no category): not an op
--   aten::mm     93000..        never ended: not counted
--   a launch at 96000 in no op: its kernel (1000 ns) belongs to no op
INSERT INTO StringIds VALUES(1001, 'aten::linear');
INSERT INTO StringIds VALUES(1002, 'aten::empty');
INSERT INTO StringIds VALUES(1003, 'aten::addmm');
INSERT INTO StringIds VALUES(1004, 'aten::add');
INSERT INTO StringIds VALUES(1005, 'aten::sum');
INSERT INTO StringIds VALUES(1006, 'step');
INSERT INTO StringIds VALUES(1007, 'aten::copy_');
INSERT INTO StringIds VALUES(1008, 'aten::mm');
INSERT OR IGNORE INTO StringIds(value) VALUES('cudaMemcpy');
INSERT OR IGNORE INTO StringIds(value) VALUES('__cudaLaunchKernel');
INSERT OR IGNORE INTO StringIds(value) VALUES('cublasSgemm_v2');
INSERT OR IGNORE INTO StringIds(value) VALUES('cudaMemsetAsync');
INSERT OR IGNORE INTO StringIds(value) VALUES('cudaDeviceSynchronize');
INSERT INTO StringIds VALUES(1020, 'scale(float*, float)');
INSERT INTO StringIds VALUES(1021, 'ampere_sgemm_32x32_sliced1x4_nn');
INSERT INTO PROCESSES(id, pid, ppid, exe, argv, startNs, endNs, clock, simulatedGpu, byeReason)
  VALUES(1, 4242, 4241, '/usr/bin/tiny', 'tiny', 1700000000500000000, 1700000000500100000, 'CLOCK_REALTIME', 0, 'exit');
-- CPROF_API: id, processId, pid, tid, start, end, correlationId, nameId (the empty profile has the API names), class
INSERT INTO CPROF_API(id, processId, pid, tid, start, end, correlationId, nameId, class, returnValue) VALUES
  (1, 1, 4242, 4242, 1700000000500000000+22000, 1700000000500000000+40000, 101, (SELECT id FROM StringIds WHERE value = 'cudaMemcpy'), 'memcpy', 0),
  (2, 1, 4242, 4242, 1700000000500000000+42000, 1700000000500000000+47000, 102, (SELECT id FROM StringIds WHERE value = '__cudaLaunchKernel'), 'launch', 0),
  (3, 1, 4242, 4242, 1700000000500000000+48000, 1700000000500000000+70000, 103, (SELECT id FROM StringIds WHERE value = 'cublasSgemm_v2'), 'gemm', 0),
  (4, 1, 4242, 4243, 1700000000500000000+71000, 1700000000500000000+76000, 104, (SELECT id FROM StringIds WHERE value = 'cudaMemsetAsync'), 'memset', 0),
  (5, 1, 4242, 4242, 1700000000500000000+86000, 1700000000500000000+90000, 105, (SELECT id FROM StringIds WHERE value = 'cudaDeviceSynchronize'), 'sync', 0),
  (6, 1, 4242, 4242, 1700000000500000000+96000, 1700000000500000000+97000, 106, (SELECT id FROM StringIds WHERE value = '__cudaLaunchKernel'), 'launch', 0);
INSERT INTO CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION VALUES(1, 5, 101, 1), (1, 5, 102, 2), (1, 5, 103, 3),
  (1, 5, 104, 4), (1, 5, 105, 5), (1, 5, 106, 6);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY(processId, start, end, deviceId, contextId, streamId, correlationId, bytes, copyKind)
  VALUES(1, 1700000000500000000+30000, 1700000000500000000+32000, 0, 1, 7, 1, 4096, 1);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL(processId, start, end, deviceId, contextId, streamId, correlationId, nameId) VALUES
  (1, 1700000000500000000+50000, 1700000000500000000+53500, 0, 1, 7, 2, 1020),
  (1, 1700000000500000000+66000, 1700000000500000000+70500, 0, 1, 7, 3, 1021),
  (1, 1700000000500000000+97500, 1700000000500000000+98500, 0, 1, 7, 6, 1020);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET(processId, start, end, deviceId, contextId, streamId, correlationId, bytes)
  VALUES(1, 1700000000500000000+77000, 1700000000500000000+77500, 0, 1, 13, 4, 1024);
-- NVTX_EVENTS: id, processId, pid, tid, start, end, eventType, textId, domainId, categoryId, color, depth, parentId, endTid
INSERT INTO NVTX_EVENTS VALUES
  (1, 1, 4242, 4242, 1700000000500000000+500, 1700000000500000000+99000, 'range', 1006, NULL, NULL, NULL, 0, NULL, 4242),
  (2, 1, 4242, 4242, 1700000000500000000+21900, 1700000000500000000+40000, 'range', 1007, NULL, 1953460835, NULL, 1, 1, 4242),
  (3, 1, 4242, 4242, 1700000000500000000+41000, 1700000000500000000+71000, 'range', 1001, NULL, 1953460835, NULL, 1, 1, 4242),
  (4, 1, 4242, 4242, 1700000000500000000+41100, 1700000000500000000+41200, 'range', 1002, NULL, 1953460835, NULL, 2, 3, 4242),
  (5, 1, 4242, 4242, 1700000000500000000+47500, 1700000000500000000+70500, 'range', 1003, NULL, 1953460835, NULL, 2, 3, 4242),
  (6, 1, 4242, 4243, 1700000000500000000+70900, 1700000000500000000+76500, 'range', 1004, NULL, 1953460835, NULL, 0, NULL, 4243),
  (7, 1, 4242, 4242, 1700000000500000000+85000, 1700000000500000000+95000, 'range', 1005, NULL, 1953460835, NULL, 1, 1, 4242),
  (8, 1, 4242, 4242, 1700000000500000000+86000, 1700000000500000000+90500, 'range', 1005, NULL, 1953460835, NULL, 2, 7, 4242),
  (9, 1, 4242, 4242, 1700000000500000000+93000, NULL, 'range', 1008, NULL, 1953460835, NULL, 2, 7, NULL);
