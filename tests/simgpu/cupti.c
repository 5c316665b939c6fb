/* Simulated libcupti.so.13: the Activity and Callback API a profiler uses, forwarded to the engine's state. */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cupti.h>

#include "engine.h"

static int no_driver(void)
{
	return simgpu_cfg()->no_driver;
}

CUptiResult cuptiGetVersion(uint32_t *version)
{
	if (!version)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*version = CUPTI_API_VERSION;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetTimestamp(uint64_t *timestamp)
{
	if (!timestamp)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*timestamp = simgpu_cupti_time(simgpu_now());
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc func)
{
	if (!func)
		return CUPTI_ERROR_INVALID_PARAMETER;
	/* The caller's clock need not tick in nanoseconds (Kineto's is the TSC): its rate is measured over 2 ms. */
	uint64_t a0 = simgpu_now(), t0 = func(), b0 = simgpu_now();
	struct timespec ts = { 0, 2000000 };
	nanosleep(&ts, NULL);
	uint64_t a1 = simgpu_now(), t1 = func(), b1 = simgpu_now();
	uint64_t n0 = a0 + (b0 - a0) / 2, n1 = a1 + (b1 - a1) / 2;
	double rate = n1 > n0 && t1 > t0 ? (double)(t1 - t0) / (double)(n1 - n0) : 1.0;
	simgpu_cupti_timestamp_map(n0, t0, rate, func);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
	return (CUptiResult)simgpu_cupti_enable_api(0, cbid, enable);
}

CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
	return (CUptiResult)simgpu_cupti_enable_api(1, cbid, enable);
}

static const char *result_name(CUptiResult r)
{
	switch (r) {
#define R(x) \
	case x: return #x;
	R(CUPTI_SUCCESS)
	R(CUPTI_ERROR_INVALID_PARAMETER)
	R(CUPTI_ERROR_INVALID_DEVICE)
	R(CUPTI_ERROR_INVALID_CONTEXT)
	R(CUPTI_ERROR_INVALID_EVENT_DOMAIN_ID)
	R(CUPTI_ERROR_INVALID_EVENT_ID)
	R(CUPTI_ERROR_INVALID_EVENT_NAME)
	R(CUPTI_ERROR_INVALID_OPERATION)
	R(CUPTI_ERROR_OUT_OF_MEMORY)
	R(CUPTI_ERROR_HARDWARE)
	R(CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT)
	R(CUPTI_ERROR_API_NOT_IMPLEMENTED)
	R(CUPTI_ERROR_MAX_LIMIT_REACHED)
	R(CUPTI_ERROR_NOT_READY)
	R(CUPTI_ERROR_NOT_COMPATIBLE)
	R(CUPTI_ERROR_NOT_INITIALIZED)
	R(CUPTI_ERROR_INVALID_METRIC_ID)
	R(CUPTI_ERROR_INVALID_METRIC_NAME)
	R(CUPTI_ERROR_QUEUE_EMPTY)
	R(CUPTI_ERROR_INVALID_HANDLE)
	R(CUPTI_ERROR_INVALID_STREAM)
	R(CUPTI_ERROR_INVALID_KIND)
	R(CUPTI_ERROR_INVALID_EVENT_VALUE)
	R(CUPTI_ERROR_DISABLED)
	R(CUPTI_ERROR_INVALID_MODULE)
	R(CUPTI_ERROR_INVALID_METRIC_VALUE)
	R(CUPTI_ERROR_HARDWARE_BUSY)
	R(CUPTI_ERROR_NOT_SUPPORTED)
	R(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED)
	R(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_DEVICE)
	R(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_NON_P2P_DEVICES)
	R(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_WITH_MPS)
	R(CUPTI_ERROR_CDP_TRACING_NOT_SUPPORTED)
	R(CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED)
	R(CUPTI_ERROR_CUDA_COMPILER_NOT_COMPATIBLE)
	R(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
	R(CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED)
	R(CUPTI_ERROR_OPENACC_UNDEFINED_ROUTINE)
	R(CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED)
	R(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
	R(CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES)
	R(CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED)
	R(CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED)
	R(CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED)
	R(CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED)
	R(CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED)
	R(CUPTI_ERROR_INVALID_CHIP_NAME)
	R(CUPTI_ERROR_UNKNOWN)
#undef R
	default: return NULL;
	}
}

static CUptiResult result_string(CUptiResult result, const char **str)
{
	if (!str)
		return CUPTI_ERROR_INVALID_PARAMETER;
	const char *n = result_name(result);
	if (!n)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*str = n;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
	return result_string(result, str);
}

CUptiResult cuptiGetErrorMessage(CUptiResult result, const char **str)
{
	return result_string(result, str);
}

CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
	return (CUptiResult)simgpu_cupti_enable((int)kind, 1);
}

CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
	return (CUptiResult)simgpu_cupti_enable((int)kind, 0);
}

CUptiResult cuptiActivityEnableLatencyTimestamps(uint8_t enable)
{
	return (CUptiResult)simgpu_cupti_latency_timestamps(enable);
}

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
					   CUpti_BuffersCallbackCompleteFunc funcBufferCompleted)
{
	return (CUptiResult)simgpu_cupti_register(funcBufferRequested, funcBufferCompleted);
}

CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	return (CUptiResult)simgpu_cupti_flush_all(flag);
}

CUptiResult cuptiActivityFlush(CUcontext context, uint32_t streamId, uint32_t flag)
{
	(void)context, (void)streamId;
	return (CUptiResult)simgpu_cupti_flush_all(flag);
}

CUptiResult cuptiActivityFlushPeriod(uint32_t time)
{
	return (CUptiResult)simgpu_cupti_flush_period(time);
}

CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t validBufferSizeBytes, CUpti_Activity **record)
{
	return (CUptiResult)simgpu_cupti_next_record(buffer, validBufferSizeBytes, record);
}

CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t streamId, size_t *dropped)
{
	(void)context, (void)streamId;
	if (!dropped)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*dropped = simgpu_cupti_dropped();
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id)
{
	return (CUptiResult)simgpu_cupti_push_external((int)kind, id);
}

CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t *lastId)
{
	return (CUptiResult)simgpu_cupti_pop_external((int)kind, lastId);
}

CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
	return (CUptiResult)simgpu_cupti_set_thread_id_type((int)type);
}

CUptiResult cuptiGetThreadIdType(CUpti_ActivityThreadIdType *type)
{
	if (!type)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*type = (CUpti_ActivityThreadIdType)simgpu_cupti_get_thread_id_type();
	return CUPTI_SUCCESS;
}

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback, void *userdata)
{
	return (CUptiResult)simgpu_cupti_subscribe(subscriber, callback, userdata);
}

CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
	return (CUptiResult)simgpu_cupti_unsubscribe(subscriber);
}

CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain,
				CUpti_CallbackId cbid)
{
	return (CUptiResult)simgpu_cupti_enable_callback(enable, subscriber, (int)domain, (int)cbid);
}

CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain)
{
	return (CUptiResult)simgpu_cupti_enable_domain(enable, subscriber, (int)domain);
}

CUptiResult cuptiEnableAllDomains(uint32_t enable, CUpti_SubscriberHandle subscriber)
{
	int err = simgpu_cupti_enable_domain(enable, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
	if (!err)
		err = simgpu_cupti_enable_domain(enable, subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
	return (CUptiResult)err;
}

CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char **name)
{
	return (CUptiResult)simgpu_cupti_callback_name((int)domain, cbid, name);
}

CUptiResult cuptiGetContextId(CUcontext context, uint32_t *contextId)
{
	(void)context;
	if (!contextId)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*contextId = 1;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetDeviceId(CUcontext context, uint32_t *deviceId)
{
	(void)context;
	if (!deviceId)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (no_driver())
		return CUPTI_ERROR_UNKNOWN;
	*deviceId = 0;
	return CUPTI_SUCCESS;
}

static CUptiResult stream_id(CUcontext context, CUstream stream, uint8_t perThreadStream,
					       uint32_t *streamId)
{
	(void)context;
	struct simgpu_stream *s;
	if (!streamId)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (simgpu_stream_resolve(stream, perThreadStream, &s))
		return CUPTI_ERROR_INVALID_STREAM;
	*streamId = simgpu_stream_id(s);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetStreamIdEx(CUcontext context, CUstream stream, uint8_t perThreadStream, uint32_t *streamId)
{
	return stream_id(context, stream, perThreadStream, streamId);
}

CUptiResult cuptiGetStreamId(CUcontext context, CUstream stream, uint32_t *streamId)
{
	return stream_id(context, stream, 0, streamId);
}

/* Buffer-sizing attributes change nothing here, but consumers (Kineto) set and read them. */
static uint64_t g_attr[CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE_DEVICE_GRAPHS + 1] = {
	[CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE] = 8 << 20,
	[CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE_CDP] = 8 << 20,
	[CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT] = 250,
	[CUPTI_ACTIVITY_ATTR_PROFILING_SEMAPHORE_POOL_SIZE] = 65536,
	[CUPTI_ACTIVITY_ATTR_PROFILING_SEMAPHORE_POOL_LIMIT] = 65536,
	[CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE] = 1,
	[CUPTI_ACTIVITY_ATTR_PROFILING_SEMAPHORE_PRE_ALLOCATE_VALUE] = 1,
};

CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t *valueSize, void *value)
{
	if (!valueSize || !value || *valueSize == 0 || *valueSize > sizeof(uint64_t) ||
	    (unsigned)attr >= sizeof(g_attr) / sizeof(g_attr[0]))
		return CUPTI_ERROR_INVALID_PARAMETER;
	uint64_t v = 0;
	memcpy(&v, value, *valueSize);
	g_attr[attr] = v;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetAttribute(CUpti_ActivityAttribute attr, size_t *valueSize, void *value)
{
	if (!valueSize || !value || *valueSize == 0 || (unsigned)attr >= sizeof(g_attr) / sizeof(g_attr[0]))
		return CUPTI_ERROR_INVALID_PARAMETER;
	size_t n = *valueSize < sizeof(uint64_t) ? *valueSize : sizeof(uint64_t);
	memcpy(value, &g_attr[attr], n);
	*valueSize = n;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiFinalize(void)
{
	return (CUptiResult)simgpu_cupti_finalize();
}
