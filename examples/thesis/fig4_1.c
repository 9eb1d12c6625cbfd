/* Figure 4.1 of the thesis, its FTMW column, as printed there: only the
 * header name differs (ft_functions.h is now ftmw.h). The master sends a
 * value to every worker and collects one result from each; each worker
 * prints a line. Kept verbatim, including that temp is sent uninitialised
 * and that main returns 1, which ftmwrun passes through as the job's exit
 * status. Run: ftmwrun -w 3 fig4_1 */
#include <stdio.h>
#include <stdlib.h>
#include "ftmw.h"

int main(int argc, char *argv[]) {
    int myrank, workers, temp, *info, i;
    FT_Status status;

    ft_init(&argc, &argv, &myrank, &workers);

    info = (int *) malloc(workers * sizeof(int));

    if(myrank == 0) {
        for(i = 1; i <= workers; i++) {
            ft_send(&temp, 1, FT_INT, i, 1);
        }
        for(i = 1; i <= workers; i++) {
            ft_recv(&info[i-1], 1, FT_INT, i, FT_ANY_TAG, &status);
        }
    }
    else {
        printf("I am Worker - %d!\n", myrank);

        ft_recv(&temp, 1, FT_INT, 0, 1, &status);
        i = myrank * temp;
        ft_send(&i, 1, FT_INT, 0, 1);
    }

    ft_finalize();
    return 1;
}
