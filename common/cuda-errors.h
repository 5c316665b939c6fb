/* Names of CUDA runtime, driver and cuBLAS return codes, as cudaGetErrorName and friends give them. */
#ifndef CPROF_COMMON_CUDA_ERRORS_H
#define CPROF_COMMON_CUDA_ERRORS_H

struct cprof_err_name {
	int code;
	const char *name;
};

/* The name of code as the API family of api (cuda*, cu*, cublas*) spells it; NULL when unknown. */
const char *cprof_error_name(const char *api, int code);
/* "35 (cudaErrorInsufficientDriver)": a return code with its name when the API family is known. */
int cprof_name_code(char *buf, size_t size, const char *api, int code);

#endif
