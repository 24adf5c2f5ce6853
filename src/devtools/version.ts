/** The package's version, written into recordings (a unit test keeps it equal to package.json's). */
export const packageVersion = '0.1.0';
