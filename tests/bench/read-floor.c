/* The SQLite read floor of a profile: every column of every row of every table, read once (make bench's yardstick for cprof's commands). */
#include <stdio.h>
#include <stdint.h>

#include <sqlite3.h>

int main(int argc, char **argv)
{
	sqlite3 *db;
	sqlite3_stmt *tables, *st;
	uint64_t rows = 0, sum = 0;
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: read-floor PROFILE.db\n");
		return 2;
	}
	if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table'", -1, &tables, NULL) != SQLITE_OK) {
		fprintf(stderr, "read-floor: %s: %s\n", argv[1], sqlite3_errmsg(db));
		return 1;
	}
	while (sqlite3_step(tables) == SQLITE_ROW) {
		char *sql = sqlite3_mprintf("SELECT * FROM \"%w\"", (const char *)sqlite3_column_text(tables, 0));

		if (sql == NULL || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
			fprintf(stderr, "read-floor: %s\n", sqlite3_errmsg(db));
			return 1;
		}
		sqlite3_free(sql);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			int i, n = sqlite3_column_count(st);

			/* touch every value, as a reader that keeps it would */
			for (i = 0; i < n; i++)
				sum += sqlite3_column_type(st, i) == SQLITE_TEXT ? (uint64_t)sqlite3_column_bytes(st, i)
										 : (uint64_t)sqlite3_column_int64(st, i);
			rows++;
		}
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE) {
			fprintf(stderr, "read-floor: %s\n", sqlite3_errmsg(db));
			return 1;
		}
	}
	sqlite3_finalize(tables);
	sqlite3_close(db);
	printf("rows %llu checksum %llu\n", (unsigned long long)rows, (unsigned long long)sum);
	return 0;
}
