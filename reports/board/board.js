(function(){
var root=document.documentElement,btn=document.getElementById('theme');
function dark(){var t=root.dataset.theme;return t?t==='dark':matchMedia('(prefers-color-scheme: dark)').matches}
btn.onclick=function(){root.dataset.theme=dark()?'light':'dark';try{localStorage.setItem('gpuprices-theme',root.dataset.theme)}catch(e){}};
function val(row,i){var c=row.cells[i];if(!c)return '';return c.dataset.v!==undefined?c.dataset.v:c.textContent}
document.querySelectorAll('table.sortable th').forEach(function(th,_,all){
 th.tabIndex=0;
 function go(){var t=th.closest('table'),b=t.tBodies[0],i=th.cellIndex,asc=th.getAttribute('aria-sort')!=='ascending';
  t.querySelectorAll('th').forEach(function(h){h.removeAttribute('aria-sort')});th.setAttribute('aria-sort',asc?'ascending':'descending');
  var rows=Array.prototype.slice.call(b.rows);
  rows.sort(function(p,q){var x=val(p,i),y=val(q,i),nx=x!==''&&!isNaN(x),ny=y!==''&&!isNaN(y);
   if(nx&&ny)return asc?x-y:y-x;if(nx!==ny)return nx?-1:1;return asc?x.localeCompare(y):y.localeCompare(x)});
  rows.forEach(function(r){b.appendChild(r)})}
 th.onclick=go;th.onkeydown=function(e){if(e.key==='Enter')go()}});
document.querySelectorAll('select.picker').forEach(function(sel){
 function show(){document.querySelectorAll(sel.dataset.target).forEach(function(el){el.classList.toggle('on',el.dataset.gpu===sel.value)})}
 sel.onchange=show;show()});
})();
