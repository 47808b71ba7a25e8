// The console serves uPlot's ES module as /static/console/uplot.js (src/http/resources/console.ts);
// this gives that import the types the uplot package ships.
import uPlot from 'uplot';
export default uPlot;
